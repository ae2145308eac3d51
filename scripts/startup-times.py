#!/usr/bin/env python3
# Start-up times side by side: each command run N times, interleaved round-robin (a loaded machine
# slows them all alike), stdin/stdout/stderr on /dev/null; prints the median wall time and the
# median CPU time (user + sys of the process and its children, from wait4: less sensitive to other
# load than wall time). A throwaway redis-server (DLOCK_REDIS_URL, $URL) and etcd ($ETCD in a
# command: its endpoint) run meanwhile. Python, not Node: Node does not report a child's rusage.
# docs/performance.md, "Start-up", shows a run.
#
#   python3 scripts/startup-times.py 40 node='node -e 0' npm='bin/dlock run k -- true' \
#     binary='dist/dlock-linux-x64 run k -- true' 'etcd=etcdctl --endpoints $ETCD lock k true'
import os, sys, time, subprocess, random, tempfile, statistics, shlex
n = int(sys.argv[1])
rp = 16379 + random.randint(0, 999); ep = rp + 2000; pp = rp + 3000
redis = subprocess.Popen(['redis-server', '--port', str(rp), '--save', '', '--appendonly', 'no'], stdout=subprocess.DEVNULL)
d = tempfile.mkdtemp()
etcd = subprocess.Popen(['etcd', '--name', 'b', '--data-dir', d, '--listen-client-urls', f'http://127.0.0.1:{ep}', '--advertise-client-urls', f'http://127.0.0.1:{ep}', '--listen-peer-urls', f'http://127.0.0.1:{pp}', '--initial-advertise-peer-urls', f'http://127.0.0.1:{pp}', '--initial-cluster', f'b=http://127.0.0.1:{pp}'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
url = f'redis://127.0.0.1:{rp}'
env = dict(os.environ, URL=url, DLOCK_REDIS_URL=url, ETCDCTL_API='3')
for _ in range(100):
    if subprocess.run(['etcdctl', '--endpoints', f'127.0.0.1:{ep}', 'endpoint', 'health'], env=env, capture_output=True).returncode == 0: break
    time.sleep(0.1)
for _ in range(100):
    if subprocess.run(['redis-cli', '-p', str(rp), 'ping'], capture_output=True).returncode == 0: break
    time.sleep(0.05)
cmds = []
for a in sys.argv[2:]:
    label, cmd = a.split('=', 1)
    cmds.append((label, shlex.split(cmd.replace('$ETCD', f'127.0.0.1:{ep}'))))
devnull = os.open(os.devnull, os.O_RDWR)
def run(argv):
    t = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
    _, status, ru = os.wait4(pid, 0)
    w = (time.perf_counter() - t) * 1000
    if status: print('failed', argv, status, file=sys.stderr)
    return w, (ru.ru_utime + ru.ru_stime) * 1000
for _, c in cmds: run(c)
res = [([], []) for _ in cmds]
for i in range(n):
    for j, (_, c) in enumerate(cmds):
        w, cpu = run(c); res[j][0].append(w); res[j][1].append(cpu)
base = statistics.median(res[0][0])
for j, (label, _) in enumerate(cmds):
    w = statistics.median(res[j][0]); cpu = statistics.median(res[j][1])
    print(f'{label:24} wall {w:7.1f} ms  cpu {cpu:7.1f} ms  ×first(wall) {w/base:5.2f}')
print(f'n={n} interleaved; load {os.getloadavg()[0]:.2f}')
redis.kill(); etcd.kill(); etcd.wait()
import shutil; shutil.rmtree(d, ignore_errors=True)
