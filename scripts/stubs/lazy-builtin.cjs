// Stand-in for a Node built-in that ioredis requires at load time but dlock rarely uses
// (tls only for rediss://, assert and dns only on error paths): the real module is loaded on
// first use, which keeps ~10 internal modules out of every plain `dlock run`.
module.exports = (load) => {
  let real;
  const get = () => (real ??= load());
  return new Proxy(function lazyBuiltin() {}, {
    apply: (_target, self, args) => Reflect.apply(get(), self, args),
    construct: (_target, args) => Reflect.construct(get(), args),
    get: (_target, name) => get()[name],
    has: (_target, name) => name in get(),
  });
};
