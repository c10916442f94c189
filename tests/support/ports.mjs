// Loopback ports chosen at run time. Nothing the tests, the demo or the benchmarks start may sit on
// a default port (n8n 5678/5679, Redis 6379, Postgres 5432): another n8n, Redis or Postgres on the
// machine may hold it, and scripts/test.sh holds the free ones so that reaching for one fails.
import net from 'node:net';

const listening = () =>
	new Promise((resolve, reject) => {
		const server = net.createServer();
		server.once('error', reject).listen(0, '127.0.0.1', () => resolve(server));
	});

// Ports handed out by this process: the kernel may offer a closed port again before the server
// it was chosen for has bound it.
const given = new Set();

/** `count` distinct free ports, none handed out before by this process. */
export async function freePorts(count) {
	const servers = [];
	try {
		const ports = [];
		while (ports.length < count) {
			const server = await listening();
			servers.push(server);
			const { port } = server.address();
			if (!given.has(port)) ports.push(port);
		}
		for (const port of ports) given.add(port);
		return ports;
	} finally {
		await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
	}
}

export const freePort = async () => (await freePorts(1))[0];

// `node tests/support/ports.mjs N` prints N free ports (for the shell scripts).
if (import.meta.url === `file://${process.argv[1]}`)
	console.log((await freePorts(Number(process.argv[2] ?? 1))).join(' '));
