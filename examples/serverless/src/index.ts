export { handler, close, type HandlerEvent, type HandlerResult } from './handler.js';
