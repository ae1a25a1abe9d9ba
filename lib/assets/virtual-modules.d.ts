/** The console's static files, carried inside the Worker bundle (scripts/build-worker.mjs). */
declare module 'virtual:console-assets' {
  const files: Record<string, string>;
  export default files;
}
