// The board's HTML and its style sheet: fixed text, with nothing from the store or the request in
// them (the script fills the page from the JSON with textContent), so nothing in them can be forged.

/** The page of `/` and `/lock/<name>`: the same shell; the script reads which from the address. */
export function boardPage(refreshMs: number): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>dlock board</title>
<link rel="stylesheet" href="/board.css">
<script src="/board.js" defer></script>
</head>
<body data-refresh-ms="${Math.round(refreshMs)}">
<header>
<h1><a href="/">dlock board</a></h1>
<input id="filter" type="search" placeholder="filter by name" aria-label="filter by name" autocomplete="off">
<p id="state">loading…</p>
</header>
<main id="locks"></main>
<footer>read-only: holds and releases are dlock commands · <a href="/api/locks">/api/locks</a> ·
<a href="/metrics">/metrics</a></footer>
</body>
</html>
`;
}

export const BOARD_CSS = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 1.5em 2em; color: #1d2330; background: #f6f7f9; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 1em; }
h1 { font-size: 1.3em; margin: .8em 0 .4em; }
h1 a { color: inherit; text-decoration: none; }
#filter { padding: .3em .5em; min-width: 16em; }
#state { margin: 0; color: #4a5263; }
#state.stale { color: #a3220f; font-weight: 600; }
.lock { background: #fff; border: 1px solid #d9dde5; border-radius: 6px; padding: .6em 1em .8em; margin: .8em 0; }
.lock h2 { font-size: 1.1em; margin: .2em 0 .5em; display: flex; gap: .8em; align-items: baseline; }
.lock h3 { font-size: .95em; margin: .8em 0 .3em; color: #4a5263; }
.key { font-family: ui-monospace, monospace; }
.mode, .state { font-size: .8em; padding: .1em .5em; border-radius: 1em; background: #e8ebf1; font-weight: 500; }
.state.held { background: #fde7c8; }
.state.free { background: #d7f0dc; }
table { border-collapse: collapse; width: 100%; font-size: .9em; }
th { text-align: left; font-weight: 600; color: #4a5263; border-bottom: 1px solid #d9dde5; padding: .2em .5em; }
td { padding: .2em .5em; border-bottom: 1px solid #eef0f4; vertical-align: top; overflow-wrap: anywhere; }
td.c-command, td.c-fence, td.c-host { font-family: ui-monospace, monospace; }
.done { color: #245c2f; }
.error { color: #a3220f; }
.empty, .more { color: #4a5263; }
footer { margin-top: 2em; color: #6b7385; font-size: .85em; }
`;
