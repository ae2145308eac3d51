// Defaults, environment variables and validation: everything between argv and a command.

export * from './options.js';
export * from './connection.js';
export * from './lock.js';
export * from './monitor.js';
export * from './commands.js';
export * from './hold.js';
export * from './reason.js';
export * from './metrics.js';
export * from './serve.js';
export * from './owner.js';
export * from './enclosing.js';
