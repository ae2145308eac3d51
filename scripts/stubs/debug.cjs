// Stand-in for the `debug` package ioredis logs through. With DEBUG=ioredis:* (CI jobs set
// DEBUG for other tools) it would print every command sent, AUTH with its password and the
// scripts' owner token among them; and it costs start-up time. dlock logs for itself.
function createDebug(namespace) {
  const debug = () => {};
  debug.enabled = false;
  debug.namespace = namespace;
  debug.log = () => {};
  debug.destroy = () => true;
  debug.extend = (name) => createDebug(`${namespace}:${name}`);
  return debug;
}
createDebug.default = createDebug;
createDebug.enabled = () => false;
createDebug.enable = () => {};
createDebug.disable = () => '';
module.exports = createDebug;
