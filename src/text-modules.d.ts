// Completion scripts and the Lua scripts (src/backends/redis/lock/lua/) are bundled as text
// (esbuild's text loader; in the tests, vitest.config.ts).
declare module '*.bash' {
  const text: string;
  export default text;
}
declare module '*.zsh' {
  const text: string;
  export default text;
}
declare module '*.fish' {
  const text: string;
  export default text;
}
declare module '*.lua' {
  const text: string;
  export default text;
}
