export * from './codes.js';
export * from './messages.js';
export * from './id-codec.js';
