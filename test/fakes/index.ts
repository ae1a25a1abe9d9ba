export * from './server.js';
export * from './regional.js';
export * from './vision.js';
export * from './global-search.js';
export * from './brave-search.js';
export * from './local-llm.js';
export * from './web.js';
export * from './settings.js';
