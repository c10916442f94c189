// Each node version's defaults are the engine's (src/config/versions.rs): a saved workflow keeps
// what its version did, as n8n saves only the values a user changed. The engine applies them to
// its own switches (`forVersion`); the node reads the table (generated into engineConstants.ts)
// only for its parameters' fallbacks (Item Concurrency, On a Broken Stream, the answer checks).
import type { ChainConfig } from '../engine';
import { VERSION_DEFAULTS } from '../engineConstants';

export type VersionedNode = keyof typeof VERSION_DEFAULTS;
export type VersionDefaults = (typeof VERSION_DEFAULTS)[VersionedNode][number][1];

/** `node`'s defaults at `typeVersion`: the table's newest row at or below it. */
export function versionDefaults(node: VersionedNode, typeVersion: number): VersionDefaults {
	const rows = VERSION_DEFAULTS[node];
	let defaults: VersionDefaults = rows[0][1];
	for (const [from, d] of rows) if (from <= typeVersion) defaults = d;
	return defaults;
}

/** Hands the engine the node and its version: the engine applies that version's defaults where
 * the user set nothing (src/config/versions.rs), and with no Fair Share Key shares a spent fleet
 * limit by `workflow:<id>` where the version does. */
export function forVersion(
	config: ChainConfig,
	node: VersionedNode,
	typeVersion: number,
	workflowId: string | undefined,
): void {
	config.node = node;
	config.type_version = typeVersion;
	if (workflowId) config.workflow_id = workflowId;
}
