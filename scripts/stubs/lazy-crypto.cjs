module.exports = require('./lazy-builtin.cjs')(() => require('node:crypto'));
