export * from './codes.js';
export * from './messages.js';
