// Stand-in for a Node built-in that ioredis requires at load time but dlock rarely uses
// (tls only for rediss://, assert and dns only on error paths, crypto only for ioredis'
// defineCommand, which dlock does not use): the real module is loaded on first use, which keeps
// ~25 internal modules out of every plain `dlock run`. `functions`: names read at load time
// (ioredis' cluster defaults keep dns.lookup and dns.resolveSrv) that load the module when called.
module.exports = (load, functions = []) => {
  let real;
  const get = () => (real ??= load());
  const deferred = new Map(functions.map((name) => [name, (...args) => get()[name](...args)]));
  return new Proxy(function lazyBuiltin() {}, {
    apply: (_target, self, args) => Reflect.apply(get(), self, args),
    construct: (_target, args) => Reflect.construct(get(), args),
    get: (_target, name) => (real === undefined && deferred.has(name) ? deferred.get(name) : get()[name]),
    has: (_target, name) => name in get(),
  });
};
