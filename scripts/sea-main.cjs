'use strict';
// Entry of the single executable. The bundle and its V8 code cache are SEA assets, loaded
// the way bin/dlock loads them, so the binary starts from the same code cache as the npm build
// (Node's own useCodeCache covers only the top level of the main script, not functions that
// are compiled later; this cache holds every function a real run compiled).
const { getAsset } = require('node:sea');
const { Script, constants } = require('node:vm');
const Module = require('node:module');

const script = new Script(Module.wrap(getAsset('dlock.cjs', 'utf8')), {
  filename: 'dlock.cjs',
  cachedData: Buffer.from(getAsset('dlock.cjs.cache')),
  importModuleDynamically: constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER,
});
const bundle = { exports: {} };
script.runInThisContext()(bundle.exports, require, bundle, process.execPath, __dirname);
