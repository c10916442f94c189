// Loopback ports chosen at run time for servers that bind them later (n8n, Redis, Postgres,
// Prometheus). Nothing the tests, the demo or the benchmarks start may sit on a default port (n8n
// 5678/5679, Redis 6379, Postgres 5432): another n8n, Redis or Postgres on the machine may hold it,
// and scripts/test.sh holds the free ones so that reaching for one fails.
//
// Why not the kernel's `listen(0)`: n8n binds its port seconds after it is chosen, and meanwhile
// the kernel may hand the same port to any other `listen(0)` (a loopback vendor in the other
// lane's test) or to an outgoing connection. n8n then fails to bind, and the test talks to the
// other server. So these ports come from below the kernel's ephemeral range, which it never hands
// out by itself, and each is claimed in a directory every test process of the machine shares
// (an exclusive create), so two processes never get the same one.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

// A claim holds its port this long: ample for a server to bind it; after that a bound port is
// found taken by the bind check, and an unbound one may be handed out again.
const CLAIM_MS = 30 * 60_000;
const CLAIMS = path.join(os.tmpdir(), `rpc-port-claims-${os.userInfo().uid}`);
const DEFAULT_PORTS = new Set([5432, 5678, 5679, 6379, 9090]);

/** The ports below the kernel's ephemeral range (its low end read from /proc, 32768 if absent). */
function range() {
	let low = 32768;
	try {
		low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]);
	} catch {
		/* not Linux: the IANA dynamic range's neighbour */
	}
	return { from: Math.max(1025, low - 12_000), to: low - 1 };
}

/** True when this process now holds `port`'s claim (new, or an expired one taken over). */
function claim(port) {
	fs.mkdirSync(CLAIMS, { recursive: true });
	const file = path.join(CLAIMS, String(port));
	try {
		fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
		return true;
	} catch (e) {
		if (e.code !== 'EEXIST') throw e;
	}
	let age;
	try {
		age = Date.now() - fs.statSync(file).mtimeMs;
	} catch {
		return false; // another process is taking it over right now
	}
	if (age < CLAIM_MS) return false;
	// Expired: whoever renames it away first takes it over.
	const stale = `${file}.${process.pid}.stale`;
	try {
		fs.renameSync(file, stale);
	} catch {
		return false;
	}
	fs.rmSync(stale, { force: true });
	return claim(port);
}

/** True when nothing listens on 127.0.0.1:`port` now. */
const bindable = (port) =>
	new Promise((resolve) => {
		const server = net.createServer();
		server.once('error', () => resolve(false));
		server.listen({ port, host: '127.0.0.1', exclusive: true }, () =>
			server.close(() => resolve(true)),
		);
	});

/** `count` distinct free ports, each claimed for this process. */
export async function freePorts(count) {
	const { from, to } = range();
	const ports = [];
	for (let tries = 0; ports.length < count; tries++) {
		if (tries > 10_000) throw new Error(`no free port left in ${from}-${to}`);
		const port = from + Math.floor(Math.random() * (to - from + 1));
		if (DEFAULT_PORTS.has(port) || ports.includes(port)) continue;
		if (claim(port) && (await bindable(port))) ports.push(port);
	}
	return ports;
}

export const freePort = async () => (await freePorts(1))[0];

// `node tests/support/ports.mjs N` prints N free ports (for the shell scripts).
if (import.meta.url === `file://${process.argv[1]}`)
	console.log((await freePorts(Number(process.argv[2] ?? 1))).join(' '));

/** A port nothing listens on: bound, then closed (a refused connection, on purpose). */
export async function closedPort() {
	const s = net.createServer();
	await new Promise((r) => s.listen(0, '127.0.0.1', r));
	const { port } = s.address();
	await new Promise((r) => s.close(r));
	return port;
}
