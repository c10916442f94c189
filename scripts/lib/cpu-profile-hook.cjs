// Preloaded into an n8n process (NODE_OPTIONS=--require ...; Node refuses --cpu-prof there):
// samples its CPU from start to exit and writes a .cpuprofile into RPC_CPU_PROFILE_DIR, with the
// wall clock at one instant of the profiler's monotonic clock (µs) to line samples up with a log.
const inspector = require('node:inspector');
const fs = require('node:fs');
const path = require('node:path');

const dir = process.env.RPC_CPU_PROFILE_DIR;
const session = new inspector.Session();
session.connect();
session.post('Profiler.enable', () =>
	session.post('Profiler.setSamplingInterval', { interval: 500 }, () =>
		session.post('Profiler.start'),
	),
);
const clocks = { wallMs: Date.now(), monoUs: Number(process.hrtime.bigint() / 1000n) };
let written = false;
function write() {
	if (written) return;
	written = true;
	// The inspector answers synchronously within the same thread.
	session.post('Profiler.stop', (error, result) => {
		if (error) return;
		const file = path.join(dir, `n8n-${process.pid}`);
		fs.writeFileSync(`${file}.cpuprofile`, JSON.stringify(result.profile));
		fs.writeFileSync(`${file}.clocks.json`, JSON.stringify(clocks));
	});
}
process.on('exit', write);
for (const signal of ['SIGTERM', 'SIGINT'])
	process.on(signal, () => {
		write();
		process.exit(0);
	});
