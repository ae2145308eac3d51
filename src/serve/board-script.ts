// The board's own script, served at /board.js (script-src 'self': the page runs nothing else).
// It fetches the board's JSON every refresh and rebuilds the list with createElement and
// textContent only: a field from the store (a forged `<script>` command) is always text, never
// markup. Written here as a function the browser runs as is: it uses nothing outside itself.
// Times show in the viewer's time zone; ages count to the store's clock, as the CLI's do.

/** The script's text, as served: the function below, called on the page's window. */
export function boardScript(): string {
  return `'use strict';\n(${String(board)})(window);\n`;
}

function board(win: any): void {
  const doc = win.document;
  const refreshMs = Number(doc.body.getAttribute('data-refresh-ms')) || 2000;
  const path: string = win.location.pathname;
  const single = path.startsWith('/lock/') ? safeDecode(path.slice('/lock/'.length)) : undefined;
  const api = single === undefined ? '/api/board' : `/api/board/${encodeURIComponent(single)}`;
  const list = doc.getElementById('locks');
  const state = doc.getElementById('state');
  const filter = doc.getElementById('filter');
  /** The last answer with data, and performance.now() when it came: ages count on from it. */
  let last: any;
  let lastAt = 0;

  function safeDecode(text: string): string | undefined {
    try {
      return decodeURIComponent(text);
    } catch {
      return undefined;
    }
  }

  /** Control, format (bidi) and separator characters as escapes, as the CLI prints them; at most 300 characters. */
  function shown(value: unknown): string {
    const text = value === null || value === undefined ? '' : String(value);
    const cut = text.length > 300 ? `${text.slice(0, 300)}…` : text;
    return cut.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu, (c) => {
      const code = c.codePointAt(0) ?? 0;
      return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
    });
  }

  /** formatDuration's words (src/duration.ts): 250ms, 4.2s, 1h2m. */
  function duration(ms: number): string {
    if (!Number.isFinite(ms)) return '?';
    if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
    if (ms < 60_000) return `${+(ms / 1000).toFixed(1)}s`;
    const total = Math.round(ms / 1000);
    const d = Math.floor(total / 86_400);
    const h = Math.floor((total % 86_400) / 3600);
    const m = Math.floor((total % 3600) / 60);
    const s = total % 60;
    return (d ? `${d}d` : '') + (h ? `${h}h` : '') + (m ? `${m}m` : '') + (s || (!d && !h && !m) ? `${s}s` : '');
  }

  /** A store time in the viewer's zone. */
  function time(ms: unknown): string {
    return typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toLocaleString() : '?';
  }

  /** The store's clock now: its reading at the answer plus the time since on this page. */
  function storeNow(): number {
    return last.store_now_ms + (win.performance.now() - lastAt);
  }

  /** How far the store's clock has run since the read the data came from. */
  function sinceRead(): number {
    return storeNow() - last.read_store_ms;
  }

  function el(tag: string, text?: unknown, className?: string): any {
    const node = doc.createElement(tag);
    if (text !== undefined) node.textContent = shown(text);
    if (className) node.className = className;
    return node;
  }

  /** A table of `rows`; a column no row fills (no reason, no priority anywhere) is left out. */
  function table(head: string[], rows: unknown[][], className: string): any {
    const filled = head.map((_, i) => rows.some((row) => row[i] !== '' && row[i] !== undefined && row[i] !== null));
    const node = el('table', undefined, className);
    const tr = el('tr');
    head.forEach((name, i) => filled[i] && tr.append(el('th', name)));
    node.append(el('thead'));
    node.firstChild.append(tr);
    const body = el('tbody');
    for (const row of rows) {
      const line = el('tr');
      row.forEach((cell, i) => {
        if (filled[i]) line.append(el('td', cell, `c-${head[i].toLowerCase().replace(/[^a-z]+/g, '-')}`));
      });
      body.append(line);
    }
    node.append(body);
    return node;
  }

  function holderRows(lock: any): unknown[][] {
    return (lock.holders ?? []).map((h: any) => {
      const held = typeof h.since_ms === 'number' ? storeNow() - h.since_ms : NaN;
      const ttlLeft = typeof h.ttl_left_ms === 'number' ? Math.max(0, h.ttl_left_ms - sinceRead()) : NaN;
      const until =
        h.hold === true ? (h.until_ms === null || h.until_ms === undefined ? 'until unhold' : time(h.until_ms)) : '';
      const left = typeof h.until_ms === 'number' ? `, ${duration(Math.max(0, h.until_ms - storeNow()))} left` : '';
      return [
        h.hold === true ? 'hold' : h.closed ? 'closed' : h.slot !== undefined ? `slot ${h.slot}` : lock.mode,
        h.host,
        h.pid ?? '',
        h.cmd,
        h.since_ms === null ? '?' : `${time(h.since_ms)} (${duration(held)} ago)`,
        Number.isNaN(ttlLeft) ? 'none' : duration(ttlLeft),
        h.fence,
        typeof h.max_hold_ms === 'number' ? `held ${duration(held)} of ${duration(h.max_hold_ms)}` : '',
        typeof h.last_heartbeat_ms === 'number' ? `${duration(Math.max(0, storeNow() - h.last_heartbeat_ms))} ago` : '',
        h.reason ?? '',
        h.user ?? '',
        until ? `${until}${left}` : '',
      ];
    });
  }

  function lineRows(lock: any): unknown[][] {
    return (lock.line ?? []).map((w: any) => [
      w.place,
      w.mode,
      w.host,
      w.hold === true ? 'none (hold)' : (w.pid ?? ''),
      w.cmd,
      typeof w.waited_ms === 'number' ? duration(w.waited_ms + sinceRead()) : '?',
      w.priority ?? '',
      w.supersede === true ? 'yes' : '',
      w.reason ?? '',
    ]);
  }

  function eventText(e: any): string {
    const parts: string[] = [];
    if (e.fence !== undefined) parts.push(`fence ${e.fence}`);
    if (e.exit !== undefined) parts.push(e.lost ? 'exit lost' : e.exit === null ? 'no command' : `exit ${e.exit}`);
    if (typeof e.held_ms === 'number') parts.push(`held ${duration(e.held_ms)}`);
    if (typeof e.waited_ms === 'number') parts.push(`waited ${duration(e.waited_ms)}`);
    if (e.reason !== undefined) parts.push(`reason ${e.reason}`);
    // Who did it: a user (unhold, a steal by unhold --force), else a process (release --force, --supersede).
    if (e.by_user !== undefined) parts.push(`by ${e.by_user}@${e.by_host ?? '?'}`);
    else if (e.by_host !== undefined) parts.push(`by ${e.by_host} pid ${e.by_pid ?? '?'}`);
    if (e.by_cmd !== undefined) parts.push(`(${e.by_cmd})`);
    if (e.by !== undefined) parts.push(`by ${e.by}`);
    if (typeof e.until_ms === 'number') parts.push(`until ${time(e.until_ms)}`);
    return parts.join(', ');
  }

  function lockCard(lock: any): any {
    const card = el('section', undefined, 'lock');
    card.setAttribute('data-key', shown(lock.key));
    const title = el('h2');
    const link = el('a', lock.key, 'key');
    link.setAttribute('href', `/lock/${encodeURIComponent(String(lock.key))}`);
    title.append(link);
    const mode = typeof lock.slots === 'number' ? `${lock.mode} ${lock.slots}` : lock.mode;
    title.append(el('span', mode, 'mode'));
    const held = lock.held === true ? 'held' : lock.held === false ? 'free' : 'cannot tell';
    title.append(el('span', lock.closed ? `${held}, closed by release --force` : held, `state ${held}`));
    card.append(title);
    if ((lock.holders ?? []).length > 0) {
      const head = ['Kind', 'Host', 'PID', 'Command', 'Since', 'TTL left', 'Fence', 'Max-hold', 'Heartbeat'];
      card.append(table([...head, 'Reason', 'User', 'Until'], holderRows(lock), 'holders'));
    }
    if ((lock.waiting ?? 0) > 0) {
      card.append(el('h3', `line: ${lock.waiting} waiting`));
      const head = ['Place', 'Mode', 'Host', 'PID', 'Command', 'Waited', 'Priority', 'Supersede', 'Reason'];
      card.append(table(head, lineRows(lock), 'line'));
      const more = lock.waiting - (lock.line ?? []).length;
      if (more > 0) card.append(el('p', `… and ${more} more`, 'more'));
    }
    if (lock.done) {
      const d = lock.done;
      const until = d.until_ms === null ? 'with no end' : `until ${time(d.until_ms)}`;
      const by = `by ${d.host} pid ${d.pid} (${d.cmd}), finished ${time(d.finished_ms)}`;
      card.append(el('p', `done this window (--once-per) ${until}: ${by}`, 'done'));
    } else if (lock.done_error) card.append(el('p', `done mark: ${lock.done_error}`, 'error'));
    if ((lock.instances ?? []).length > 1) {
      const rows = lock.instances.map((m: any) => [
        Object.values(m)[0],
        m.error ? `error: ${m.error}` : m.held ? `held by ${m.holder?.host} pid ${m.holder?.pid}` : 'free',
      ]);
      card.append(table(['Member', 'Says'], rows, 'instances'));
    }
    if (Array.isArray(lock.history) && lock.history.length > 0) {
      card.append(el('h3', 'recent events'));
      const rows = lock.history.map((e: any) => [time(e.time_ms), e.event, e.host ?? '', e.cmd ?? '', eventText(e)]);
      card.append(table(['Time', 'Event', 'Host', 'Command', 'Details'], rows, 'history'));
    } else if (lock.history_error) card.append(el('p', `history: ${lock.history_error}`, 'error'));
    return card;
  }

  function render(): void {
    const cards: any[] = [];
    const locks = single === undefined ? (last?.locks ?? []) : last?.lock ? [last.lock] : [];
    const wanted = String(filter?.value ?? '').toLowerCase();
    for (const lock of locks)
      if (!wanted || String(lock.key).toLowerCase().includes(wanted)) cards.push(lockCard(lock));
    for (const entry of last?.unreadable ?? [])
      cards.push(el('p', `${entry.key}: unreadable: ${entry.error}`, 'error unreadable'));
    if (last && cards.length === 0)
      cards.push(el('p', single === undefined ? `no locks held under ${last.prefix}` : 'not found', 'empty'));
    if (last?.omitted > 0) cards.push(el('p', `… and ${last.omitted} more locks (not shown)`, 'more'));
    list.replaceChildren(...cards);
  }

  function say(answer: any): void {
    state.className = answer?.stale ? 'stale' : 'fresh';
    if (answer?.unreachable_since_ms !== undefined && answer.unreachable_since_ms !== null) {
      const shownData = last ? `; the data below is from ${time(last.read_at_ms)} (stale)` : '';
      state.textContent = shown(
        `store unreachable since ${time(answer.unreachable_since_ms)}: ${answer.error}${shownData}`,
      );
    } else if (answer?.error) state.textContent = shown(answer.error);
    else if (last) state.textContent = shown(`${last.prefix} · updated ${new Date().toLocaleTimeString()}`);
  }

  async function refresh(): Promise<void> {
    try {
      // A board that does not answer within a few refreshes is said so, and asked again.
      const signal = win.AbortSignal.timeout(refreshMs * 5);
      const response = await win.fetch(api, { cache: 'no-store', headers: { accept: 'application/json' }, signal });
      const answer = await response.json();
      if (typeof answer.store_now_ms === 'number' && answer.read_store_ms !== undefined) {
        last = answer;
        lastAt = win.performance.now();
      }
      say(answer);
      render();
    } catch (error) {
      state.className = 'stale';
      state.textContent = shown(`the board does not answer (${error}); trying again`);
    }
    win.setTimeout(refresh, refreshMs);
  }

  if (filter) filter.addEventListener('input', render);
  if (single !== undefined && filter) filter.parentNode.removeChild(filter);
  void refresh();
}
