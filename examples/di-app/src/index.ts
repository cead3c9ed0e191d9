export { startApp, type App } from './app.js';
export { appModule, AppSettingsId, type AppSettings } from './app-module.js';
export { Compaction } from './compaction.js';
export { Presence } from './presence.js';
export { Roster } from './roster.js';
