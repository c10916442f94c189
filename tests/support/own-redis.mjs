// A redis-server of a test's own on a free loopback port (no persistence): stopped and started
// again on the same port when a test takes the store away (the shared one serves other lanes).
import { spawn } from 'node:child_process';
import net from 'node:net';
import { freePorts } from './ports.mjs';

/** Starts redis-server on `port` (default: a free one); resolves once it answers PING. */
export async function startOwnRedis(port) {
	port ??= (await freePorts(1))[0];
	const child = spawn(
		'redis-server',
		['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
		{ stdio: ['ignore', 'pipe', 'pipe'] },
	);
	let out = '';
	child.stdout.on('data', (d) => (out += d));
	child.stderr.on('data', (d) => (out += d));
	const spawnError = new Promise((_, reject) => child.on('error', reject));
	for (let k = 0; k < 100; k++) {
		const ok = await Promise.race([
			spawnError,
			new Promise((resolve) => {
				const sock = net.connect(port, '127.0.0.1', () => sock.end('PING\r\n'));
				sock.on('data', (d) => resolve(String(d).startsWith('+PONG')));
				sock.on('error', () => resolve(false));
			}),
		]);
		if (ok)
			return {
				port,
				/** Stopped; resolves once the process exited. */
				stop: () =>
					new Promise((resolve) => {
						if (child.exitCode !== null) return resolve();
						child.on('exit', resolve);
						child.kill('SIGTERM');
					}),
			};
		if (child.exitCode !== null) break;
		await new Promise((r) => setTimeout(r, 100));
	}
	child.kill('SIGKILL');
	throw new Error(`redis-server did not answer on ${port}: ${out.slice(-2000)}`);
}
