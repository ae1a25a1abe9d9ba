/** The console's static files, carried inside the Worker bundle (scripts/build-worker.mjs). */
declare module 'virtual:console-assets' {
  const files: Record<string, string>;
  export default files;
}

/** The names of the database migrations the Worker bundle was built with (scripts/build-worker.ts). */
declare module 'virtual:migrations' {
  const names: readonly string[];
  export default names;
}
