// Temporary folders for tests: made under the system's temp dir and removed when the test
// process exits, whether its tests passed or failed (node --test runs each file in a process of
// its own), so repeated runs do not fill /tmp.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const made = [];
process.on('exit', () => {
	for (const dir of made) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** A fresh folder named `<prefix>XXXXXX`, removed at the end of this process. */
export function tempDir(prefix) {
	const dir = mkdtempSync(path.join(tmpdir(), prefix));
	made.push(dir);
	return dir;
}
