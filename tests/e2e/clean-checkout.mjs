// A package as a user gets it: `npm ci` then `npm pack` in a fresh `git clone` of HEAD with only
// Node on PATH (no cargo, rustc, wasm-pack), then installed the way n8n's community-package
// installer does: the tarball unpacked into <user folder>/.n8n/nodes/node_modules/<name>, its
// dev, peer and optional dependencies dropped, `npm install` shallow with scripts off.
import { execFileSync, spawnSync } from 'node:child_process';
import {
	copyFileSync,
	existsSync,
	mkdirSync,
	readFileSync,
	readdirSync,
	renameSync,
	writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/n8n.mjs';
import { tempDir } from '../support/tmp.mjs';

export const PKG = 'n8n-nodes-resilient-provider-call';

/** Node's own folder and the system's (bash, git, tar, npm): nothing of Rust. */
export function nodeOnlyEnv(nodeBin, work) {
	const env = { ...process.env };
	for (const k of Object.keys(env)) if (/^(CARGO|RUSTUP|RUST)/.test(k)) delete env[k];
	return {
		...env,
		PATH: `${path.dirname(nodeBin)}:/usr/bin:/bin`,
		// scripts/lib/common.sh puts $HOME/.cargo/bin on PATH: a fresh HOME keeps Rust out.
		HOME: path.join(work, 'home'),
		RPC_CACHE: path.join(work, 'cache'),
		npm_config_cache: path.join(homedir(), '.npm'),
		npm_config_userconfig: path.join(homedir(), '.npmrc'),
	};
}

/** Clone HEAD, `npm ci`, `npm pack` under `nodeBin`; returns the tarball and its file list. */
export function packFromCleanClone(nodeBin) {
	const work = tempDir('rpc-clean-clone-');
	const repo = path.join(work, 'repo');
	mkdirSync(path.join(work, 'home'));
	const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT }).toString().trim();
	execFileSync('git', ['clone', '--quiet', '--no-checkout', ROOT, repo]);
	execFileSync('git', ['-c', 'advice.detachedHead=false', 'checkout', '--quiet', head], {
		cwd: repo,
	});
	const env = nodeOnlyEnv(nodeBin, work);
	const rust = spawnSync(
		'bash',
		['-c', 'command -v cargo || command -v rustc || command -v wasm-pack'],
		{
			env,
		},
	);
	if (rust.status === 0) throw new Error(`Rust is still on PATH: ${rust.stdout}`);
	const run = (args) =>
		execFileSync('npm', args, {
			cwd: repo,
			env,
			stdio: ['ignore', 'pipe', 'pipe'],
			timeout: 900_000,
		});
	run(['ci', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error']);
	run(['pack', '--loglevel=error', `--pack-destination=${work}`]);
	const tarball = path.join(
		work,
		readdirSync(work).find((f) => f.endsWith('.tgz')),
	);
	const files = execFileSync('tar', ['-tzf', tarball]).toString().trim().split('\n');
	return { head, tarball, files };
}

/**
 * One clean-clone pack per test command (RPC_RUN_DIR, made by scripts/test.sh): the two n8n lanes
 * reach this file together, and a second `npm ci` of the same commit (~750 MB of dev
 * dependencies) would only spend a minute of both cores. The first caller packs under its n8n's
 * Node; the other waits for that tarball and installs it in its own n8n. Run alone, it packs.
 */
export async function packFromCleanCloneOnce(nodeBin) {
	const runDir = process.env.RPC_RUN_DIR;
	if (!runDir) return { ...packFromCleanClone(nodeBin), packedBy: nodeBin };
	const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT }).toString().trim();
	const dir = path.join(runDir, `clean-pack-${head}`);
	const result = path.join(dir, 'result.json');
	const failed = path.join(dir, 'failed');
	try {
		mkdirSync(dir);
	} catch (e) {
		if (e.code !== 'EEXIST') throw e;
		for (const end = Date.now() + 20 * 60_000; !existsSync(result);) {
			if (existsSync(failed))
				throw new Error(
					`the other lane's clean-clone pack failed: ${readFileSync(failed, 'utf8')}`,
				);
			if (Date.now() > end) throw new Error(`no clean-clone pack in ${dir} after 20 min`);
			await new Promise((r) => setTimeout(r, 1000));
		}
		return JSON.parse(readFileSync(result, 'utf8'));
	}
	try {
		const packed = packFromCleanClone(nodeBin);
		// The packer's own temporary folder goes with its process: the tarball is kept in the run's.
		const tarball = path.join(dir, path.basename(packed.tarball));
		copyFileSync(packed.tarball, tarball);
		const shared = { ...packed, tarball, packedBy: nodeBin };
		writeFileSync(`${result}.tmp`, JSON.stringify(shared));
		renameSync(`${result}.tmp`, result);
		return shared;
	} catch (e) {
		writeFileSync(failed, String(e.stack ?? e));
		throw e;
	}
}

/** n8n's community installer, step by step (packages/cli community-packages service). */
export function installLikeN8n(tarball, n8nHome) {
	const nodesDir = path.join(n8nHome, '.n8n', 'nodes');
	const pkgDir = path.join(nodesDir, 'node_modules', PKG);
	mkdirSync(pkgDir, { recursive: true });
	execFileSync('tar', ['-xzf', tarball, '-C', pkgDir, '--strip-components=1']);
	const pj = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
	delete pj.devDependencies;
	delete pj.peerDependencies;
	delete pj.optionalDependencies;
	writeFileSync(path.join(pkgDir, 'package.json'), JSON.stringify(pj, null, 2));
	execFileSync(
		'npm',
		[
			'install',
			'--audit=false',
			'--fund=false',
			'--bin-links=false',
			'--install-strategy=shallow',
			'--ignore-scripts=true',
			'--package-lock=false',
			'--prefer-offline',
		],
		{ cwd: pkgDir, stdio: 'ignore' },
	);
	writeFileSync(
		path.join(nodesDir, 'package.json'),
		JSON.stringify({ name: 'installed-nodes', private: true, dependencies: { [PKG]: pj.version } }),
	);
	return pkgDir;
}
