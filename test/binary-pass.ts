// Which test files run a second time against the standalone executable (Bun, dist/dlock-linux-x64),
// as the vitest project `binary` (vitest.config.ts, DLOCK_BIN set for it). The binary runs the same
// bundled JavaScript as bin/dlock; what differs is the runtime, so a file is in when it exercises
// what Bun does differently from Node: spawning, descriptors and signals, net/tls under ioredis,
// http for pings and metrics, process.title, closed stdio, the start-up path (scripts/binary-main.cjs),
// the error names and messages the runtime gives, its clock and regex engine. Each file below says
// why it is in or out; test/unit/binary-pass.test.ts checks that every file under test/cli,
// test/topology, test/hostile and test/slow is in exactly one of the two lists.
// Every file of those folders against the binary, as before: `npm run test:binary:all` (run before a
// release: README, "Development").

/** In the binary pass: the runtime surface each one exercises. */
export const BINARY_PASS: Record<string, string> = {
  'cli/smoke': 'the binary starts and runs a command under a lock at all',
  'cli/run.fds': 'descriptors 3 and up reach the command through scripts/binary-main.cjs, not bin/dlock',
  'cli/run.signals': 'signals forwarded to the child and while waiting; the parent-death signal',
  'cli/run.tree': "stopping the command's whole process tree, found in /proc, under Bun's child_process",
  'cli/run.background': 'background children, reparenting and setsid -f: what Bun waits for',
  'cli/run.ready': "the launcher shell blocked on a pipe: Bun's spawn with extra stdio, ps titles",
  'cli/run.exit-codes': "statuses, 128+N, 126/127 from Bun's spawn errors, 69 from its ECONNREFUSED",
  'cli/run.parsing': 'argv as a Bun-compiled executable hands it over',
  'cli/run.lease': "renewal timers and a Redis that stops answering: Bun's timers and socket timeouts",
  'cli/run.bounds': '--max-hold/--heartbeat timers, SIGTERM then SIGKILL, the heartbeat file',
  'cli/run.deadlines': "a stalled event loop (SIGSTOP) and a slow link: Bun's timers and net",
  'cli/run.partial': "replies dropped, stalled or reset by a proxy: ioredis's error paths on Bun's net",
  'cli/run.passwords': "messages built from Bun's connection and auth errors, masked",
  'cli/run.exclusion': 'the core promise; the waiter woken over a second (subscriber) connection',
  'cli/acquire': "the keeper: a detached process with closed stdio that outlives acquire's shell",
  'cli/acquire.background': "the keeper watching a section's background steps through /proc",
  'cli/acquire.bounds': 'the keeper signalling a shell that is not its child',
  'cli/shell-idioms': "acquire's statuses in real shells: SIGINT/SIGTERM while waiting, a SIGKILLed keeper",
  'cli/dead-pid': "a SIGKILLed dlock; pid and host name as Bun's os reports them",
  'cli/hold': "the OS user name from Bun's os.userInfo (unhold compares it), run as another uid under setpriv",
  'cli/complete-keys': 'silent on a Redis down or stalled: connect timeouts and no output under Bun',
  'cli/output': "closed and broken stdout/stderr, pipes, the spinner on a pseudo-terminal (Bun's tty)",
  'cli/on-event': 'hooks spawned with /bin/sh and JSON on stdin; a hanging hook',
  'cli/ping': "http(s) pings with Bun's fetch (proxies, redirects, CAs: binary-only cases)",
  'cli/metrics': '--listen (an http server), --push (an http client), --textfile (fs rename)',
  'cli/server-clock': "libfaketime shifting Bun's clock",
  'cli/wait-outage': "Redis restarted during a wait: reconnecting and --connect-timeout on Bun's net",
  'cli/docs.cron-ci': "a binary-only case: the binary on cron's PATH where node is not",
  'topology/tls': "rediss:// through Bun's tls: verification, the CA, the host name",
  'topology/etcd.auth-tls':
    "etcds:// through Bun's fetch and its tls option; etcd's auth token fetched again after it expired",
  'topology/sentinel': 'a failover mid-hold: sockets closed by a killed primary and reopened elsewhere',
  'topology/redlock': "5 connections at once, some refused: a quorum over Bun's parallel connects",
  'topology/etcd.etcdctl':
    "the etcd gateway client over Bun's fetch beside etcdctl: refused and stalled members, a lost lease, SIGTERM",
  'topology/etcd.interop': "the etcd gateway client over Bun's fetch, its watch streamed, in one line with etcdctl",
  'topology/etcd.rows':
    "the lock rows on etcd: Bun's fetch (the binary's gateway client) for grant, txn, keepalive and the watch",
  'topology/etcd.failover':
    "Bun's fetch between endpoints: a reply that is not etcd's, a revoke reply lost, a watch that passes nothing",
  'topology/etcd.cluster':
    "failover between etcd members under Bun's fetch: refused, reset, stalled and unanswered requests, their timeouts",
  'hostile/hostile-child': "the child's argv and environment as Bun's spawn passes them",
  'hostile/long-arguments': "100 kB arguments through JavaScriptCore's regex engine, not V8's",
  'hostile/masking': "messages quoting URLs Bun's URL parser rejects, masked",
  'hostile/secrets': 'the command line in ps (process.title) and the debug variables runtimes read',
  'hostile/etcd-gateway':
    "a lying etcd gateway read by Bun's fetch in the binary: huge, endless and broken bodies, watch streams",
  'hostile/server-messages': "non-Redis listeners, a TLS-only server, a wrong password: Bun's net/tls errors",
  'slow/chaos': "every fault kind of the chaos smoke against the binary's net and timers",
  'slow/binary': 'the artefact itself (the one CI built): its checksum file, an empty environment',
};

/** Run once, by bin/dlock only: why the binary adds nothing there. */
export const NPM_ONLY: Record<string, string> = {
  'cli/acl': "ACL denials are Redis replies read by the same bundle; auth on Bun's net is run.passwords'",
  'cli/completions': "the completion scripts are generated text; the binary's __complete-keys is complete-keys'",
  'cli/docs': 'transcripts of behaviours each tested against the binary by a file above; the rest is text',
  'cli/doctor': "verdicts are the bundle's logic on Redis replies; libfaketime under Bun is server-clock's",
  'cli/doctor.etcd': "verdicts are the bundle's logic on replies; Bun's fetch on etcd's gateway is etcd-gateway's",
  'cli/durations': "parsing in the bundle; argv under Bun is run.parsing's",
  'cli/help': "--help's text and wrapping from $COLUMNS; writing to a pipe under Bun is output's",
  'cli/history': 'Lua and rendering',
  'cli/json-schema': 'the shapes of events the bundle builds; the runs that emit them are in the binary pass',
  'cli/line.fifo': "the line's order is Lua; a waiter signalled while waiting is run.signals'",
  'cli/line.shared': 'shared holds are Lua',
  'cli/line.slots': "slots are Lua; DLOCK_SLOT reaches the child as hostile-child's variables do",
  'cli/man': 'the man page is text',
  'cli/nested.held': 'DLOCK_HELD is parsed by the bundle',
  'cli/once-per': "the window is Lua on the server's clock; libfaketime under Bun is server-clock's",
  'cli/release-force': "the lock-delay is Lua; the removed holder stopping its command is run.lease's loss",
  'cli/run.nested': 'the nested mode check is bundle logic (64 before anything runs)',
  'cli/run.nested-bounds': "nested bounds are the bundle's; their timers and tree stops are run.bounds' and run.tree's",
  'cli/run.nested-lease': "nested renewal is run.lease's renewal under a given token",
  'cli/run.status': "status rendering; release --force's round trip is as in run.lease",
  'cli/startup': "Node's moduleLoadList: runs bin/dlock even under DLOCK_BIN (an exact repeat)",
  'cli/wait-status': "the 30 s cadence is a timer like run.lease's; the status line on a pipe under Bun is output's",
  'topology/acl.sentinel': "the permission check is the bundle's; Sentinel's sockets are sentinel's",
  'topology/cluster': "slot routing and MOVED/ASK are ioredis logic on the same sockets; a lost socket is sentinel's",
  'topology/line.topology': "the line's order is Lua",
  'topology/redlock-blips': "quorum bookkeeping; an outage during a wait is wait-outage's",
  'topology/redlock-duplicates': 'refused before connecting (64)',
  'topology/redlock-env': "URL list parsing; masked connection errors are run.passwords'",
  'topology/redlock-fence': 'the max-register is Lua',
  'topology/redlock-loss': "quorum arithmetic; a lease lost on Bun's timers is run.lease's",
  'topology/redlock-retake': 'the re-take is Lua on a majority view',
  'topology/replicas': 'WAIT times out on the server',
  'topology/two-instances': 'refused before connecting',
  'hostile/foreign-keys': 'type checks in Lua',
  'hostile/forged-holder':
    "sanitising in the bundle; the spinner on a pty is output's, SIGTERM while waiting run.signals'",
  'hostile/hostile-input': 'parsing, mostly in-process',
  'hostile/hostile-keys': 'keys stored literally: Lua and SCAN patterns',
  'hostile/line.forged': 'admission from forged line data is decided in Lua',
  'hostile/many-keys': "bounded reads are the bundle's and Lua's",
  'hostile/lying-server':
    "RESP parsing is ioredis (the same JS); Bun's socket errors and timeouts are server-messages'",
  'hostile/metrics.forged': "the bundle's exposition of forged data",
  'slow/pack': 'tests the npm tarball even under DLOCK_BIN (an exact repeat)',
  'slow/binaries': "builds and runs every target's binary itself; it ignores DLOCK_BIN (an exact repeat)",
  'slow/deb': 'builds its .deb from a binary it compiles; it ignores DLOCK_BIN (an exact repeat)',
  'slow/fresh-clone': "runs the README's first command in a fresh clone, which starts bin/dlock by design",
};

/**
 * Seconds per file from the last full runs [bin/dlock, binary] (loaded 2-core machine), so the
 * sequencer (vitest.config.ts) starts the longest first and the two workers end together on a
 * fresh clone, where vitest has no durations of its own yet. Files under 4 s are left out.
 */
export const SECONDS: Record<string, readonly [number, number]> = {
  'cli/wait-status': [65, 64],
  'cli/hold': [5, 5],
  'slow/chaos': [46, 45],
  'slow/binaries': [35, 0],
  'slow/deb': [24, 0],
  'slow/fresh-clone': [10, 0],
  'cli/ping': [39, 30],
  'cli/docs': [49, 38],
  'topology/etcd.auth-tls': [14, 14],
  'topology/etcd.cluster': [29, 29],
  'topology/sentinel': [28, 27],
  'hostile/forged-holder': [28, 17],
  'hostile/etcd-gateway': [16, 15],
  'cli/doctor.etcd': [6, 0],
  'topology/redlock-blips': [27, 26],
  'topology/cluster': [27, 27],
  'topology/redlock': [26, 22],
  'topology/etcd.etcdctl': [19, 19],
  'cli/acquire': [25, 16],
  'cli/once-per': [23, 23],
  'hostile/hostile-input': [22, 6],
  'hostile/lying-server': [20, 12],
  'cli/run.lease': [20, 19],
  'cli/run.bounds': [20, 17],
  'cli/release-force': [20, 19],
  'cli/acl': [20, 13],
  'cli/metrics': [18, 15],
  'cli/shell-idioms': [17, 9],
  'cli/help': [17, 6],
  'cli/line.slots': [16, 15],
  'cli/run.nested-lease': [15, 13],
  'cli/acquire.bounds': [15, 13],
  'cli/line.fifo': [14, 12],
  'topology/etcd.rows': [14, 12],
  'topology/redlock-loss': [13, 12],
  'cli/doctor': [13, 7],
  'cli/output': [12, 9],
  'cli/completions': [11, 7],
  'topology/redlock-env': [10, 8],
  'hostile/hostile-keys': [10, 4],
  'cli/nested.held': [10, 3],
  'cli/run.exclusion': [9, 7],
  'hostile/many-keys': [8, 6],
  'cli/run.nested-bounds': [8, 7],
  'cli/run.exit-codes': [8, 5],
  'cli/acquire.background': [8, 6],
  'cli/server-clock': [7, 6],
  'cli/durations': [7, 2],
  'cli/wait-outage': [6, 6],
  'cli/json-schema': [6, 4],
  'topology/redlock-retake': [5, 5],
  'topology/redlock-fence': [5, 4],
  'topology/line.topology': [5, 3],
  'hostile/server-messages': [5, 3],
  'hostile/foreign-keys': [5, 1],
  'cli/run.status': [5, 4],
  'cli/run.deadlines': [5, 5],
  'cli/run.background': [5, 4],
  'cli/history': [5, 3],
  'topology/tls': [4, 2],
  'topology/replicas': [4, 5],
  'hostile/line.forged': [4, 3],
  'hostile/hostile-child': [4, 3],
  'cli/run.tree': [4, 4],
  'cli/run.partial': [4, 4],
  'cli/line.shared': [4, 2],
};

/**
 * Files that spend their time waiting, not computing (a 60 s status period, the chaos smoke's
 * 20 s of timed phases), run by `npm run test:spawn` in a vitest run of their own beside the main
 * one (scripts/test-spawn.mjs): a third lane that costs the two cores little, so the two workers of
 * the main run are not held up by them. CPU in one run here: wait-status 3.4 s in 67 s, the
 * chaos smoke 16 s in 44 s.
 */
export const IDLE_LANE: readonly string[] = ['cli/wait-status', 'slow/chaos'];
