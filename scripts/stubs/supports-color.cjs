// Stand-in for the optional `supports-color` that `debug` tries to require: dlock never
// colours debug output, and a real lookup would make the single executable warn at start.
module.exports = false;
