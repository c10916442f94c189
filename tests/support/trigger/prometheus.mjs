// A real Prometheus (Debian's package) on a free loopback port, scraping one target every second;
// queried through its HTTP API.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePorts } from '../ports.mjs';

/** `interval` / `timeout`: the scrape's, in seconds (1 s each unless told). */
export async function startPrometheus(target, metricsPath, { interval = 1, timeout = 1 } = {}) {
	const dir = mkdtempSync(path.join(tmpdir(), 'rpc-prometheus-'));
	const [port] = await freePorts(1);
	writeFileSync(
		path.join(dir, 'prometheus.yml'),
		`global:\n  scrape_interval: ${interval}s\n  scrape_timeout: ${timeout}s\nscrape_configs:\n  - job_name: rpc\n    metrics_path: ${metricsPath}\n    static_configs:\n      - targets: ['${target}']\n`,
	);
	const child = spawn(
		'prometheus',
		[
			`--config.file=${path.join(dir, 'prometheus.yml')}`,
			`--storage.tsdb.path=${path.join(dir, 'data')}`,
			`--web.listen-address=127.0.0.1:${port}`,
		],
		{ stdio: ['ignore', 'pipe', 'pipe'] },
	);
	let log = '';
	child.stdout.on('data', (d) => (log += d));
	child.stderr.on('data', (d) => (log += d));
	const base = `http://127.0.0.1:${port}`;
	for (let i = 0; ; i++) {
		if (child.exitCode !== null) throw new Error(`prometheus exited: ${log.slice(-2000)}`);
		if (
			await fetch(`${base}/-/ready`).then(
				(r) => r.ok,
				() => false,
			)
		)
			break;
		if (i > 200) throw new Error(`prometheus not ready in 20 s: ${log.slice(-2000)}`);
		await new Promise((r) => setTimeout(r, 100));
	}
	return {
		/** The value of an instant query with one series, or undefined while it has none. */
		async value(query) {
			const r = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(query)}`);
			const body = await r.json();
			if (body.status !== 'success') throw new Error(`query ${query}: ${JSON.stringify(body)}`);
			if (body.data.result.length > 1)
				throw new Error(`query ${query}: ${body.data.result.length} series`);
			return body.data.result[0] ? Number(body.data.result[0].value[1]) : undefined;
		},
		/** The value of a one-series query once Prometheus holds a sample of it scraped at or after
		 * `ms` (epoch milliseconds): what the target answered after that moment, not an earlier
		 * scrape's value. Waits for that scrape (every scrape is at most `interval` apart). */
		async valueScrapedAfter(query, ms, waitMs = 30_000) {
			const end = Date.now() + waitMs;
			for (;;) {
				const at = await this.value(`timestamp(${query})`);
				if (at !== undefined && at * 1000 >= ms) return this.value(query);
				if (Date.now() > end)
					throw new Error(
						`no scrape of ${query} after ${new Date(ms).toISOString()} in ${waitMs} ms`,
					);
				await new Promise((r) => setTimeout(r, 250));
			}
		},
		/** The HTTP API's answer to an instant query (`time` in seconds; now when absent). */
		async query(query, time) {
			const at = time === undefined ? '' : `&time=${time}`;
			const r = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(query)}${at}`);
			return r.json();
		},
		/** The HTTP API's answer to a range query (seconds; `step` in seconds). */
		async range(query, start, end, step) {
			const q = `query=${encodeURIComponent(query)}&start=${start}&end=${end}&step=${step}`;
			const r = await fetch(`${base}/api/v1/query_range?${q}`);
			return r.json();
		},
		/** The scrape's health: 1 when the last scrape of the target succeeded. */
		up: () => fetch(`${base}/api/v1/query?query=up`).then((r) => r.json()),
		log: () => log,
		async stop() {
			child.kill('SIGTERM');
			await new Promise((r) => (child.exitCode !== null ? r() : child.on('exit', r)));
			rmSync(dir, { recursive: true, force: true });
		},
	};
}
