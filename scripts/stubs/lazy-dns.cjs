module.exports = require('./lazy-builtin.cjs')(() => require('node:dns'), ['lookup', 'resolveSrv']);
