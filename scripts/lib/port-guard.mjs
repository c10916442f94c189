// Holds default ports during a test run so that anything reaching for one fails at once: it
// accepts and drops every connection and records that one arrived.
//   node scripts/lib/port-guard.mjs <record file> <port>…
// Prints `holding <port>` or `left alone <port> (in use)` per port, then `ready`. A port already in
// use belongs to someone else (a user's n8n, Redis, Postgres): it is left alone, never touched.
import net from 'node:net';
import { appendFileSync, writeFileSync } from 'node:fs';

const [record, ...ports] = process.argv.slice(2);
if (!record || ports.length === 0) {
	console.error('usage: port-guard.mjs <record file> <port>…');
	process.exit(2);
}
writeFileSync(record, '');

function hold(port, host) {
	return new Promise((resolve) => {
		const server = net.createServer((socket) => {
			appendFileSync(
				record,
				`${new Date().toISOString()} port ${port}: connection from ${socket.remoteAddress}:${socket.remotePort}\n`,
			);
			socket.destroy();
		});
		server.once('error', () => resolve(false));
		// '::' also takes IPv4 (dual stack): both 127.0.0.1 and ::1 land here.
		server.listen({ port: Number(port), host }, () => resolve(true));
	});
}

for (const port of ports) {
	const held = (await hold(port, '::')) || (await hold(port, '127.0.0.1'));
	console.log(held ? `holding ${port}` : `left alone ${port} (in use)`);
}
console.log('ready');
// Alive until stopped even when every port was taken: the test command checks it is still here.
setInterval(() => {}, 1 << 30);
