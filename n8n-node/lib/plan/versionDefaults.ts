// Each node version's defaults, from the engine's table (src/config/versions.rs, generated into
// engineConstants.ts): a saved workflow keeps what its version did, as n8n saves only the values
// a user changed. The node looks its typeVersion up here; it keeps no default of its own.
import type { ChainConfig } from '../engine';
import { ENGINE_DEFAULTS, VERSION_DEFAULTS } from '../engineConstants';

export type VersionedNode = keyof typeof VERSION_DEFAULTS;
export type VersionDefaults = (typeof VERSION_DEFAULTS)[VersionedNode][number][1];

/** `node`'s defaults at `typeVersion`: the table's newest row at or below it. */
export function versionDefaults(node: VersionedNode, typeVersion: number): VersionDefaults {
	const rows = VERSION_DEFAULTS[node];
	let defaults: VersionDefaults = rows[0][1];
	for (const [from, d] of rows) if (from <= typeVersion) defaults = d;
	return defaults;
}

/** The engine's settings the version turns on, where the user set nothing (off, or 0, is the
 * engine's own default). `workflowId`: the key a spent fleet limit is shared by where the version
 * shares by workflow and the user set no Fair Share Key. */
export function withVersionDefaults(
	config: ChainConfig,
	d: VersionDefaults,
	workflowId: string | undefined,
): void {
	for (const key of [
		'wait_in_line',
		'wait_for_slot',
		'fleet_limit',
		'continue_broken_streams',
		'learn_stream_pace',
		'next_provider_when_input_too_long',
	] as const)
		if (config[key] === undefined && d[key]) config[key] = true;
	if (config.probe_interval_ms === undefined && d.probe_interval_ms)
		config.probe_interval_ms = d.probe_interval_ms;
	// As above: only a priority other than the engine's own default is handed over.
	if (config.priority === undefined && d.priority !== ENGINE_DEFAULTS.priority)
		config.priority = d.priority;
	if (!config.fair_share_key && d.fair_share_by_workflow && workflowId)
		config.fair_share_key = `workflow:${workflowId}`;
}
