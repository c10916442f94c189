// Loads the WASM policy engine lazily, on the first execute(): n8n loads every node module at
// start-up in every process, and a failure there would disable the whole package. A load
// failure here becomes a clear NodeOperationError on the node instead.
import * as path from 'path';
import { INode, NodeOperationError } from 'n8n-workflow';
import type * as Wasm from '../../pkg/engine';

export type EngineModule = typeof Wasm;
export type * from '../../pkg/engine';

let loaded: EngineModule | undefined;

export function loadEngine(node: INode): EngineModule {
	if (loaded) return loaded;
	const file = path.join(__dirname, '..', 'engine', 'engine.js');
	try {
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		loaded = require(file) as EngineModule;
		return loaded;
	} catch (error) {
		throw new NodeOperationError(node, 'The resilience engine (WebAssembly) could not be loaded', {
			description: `Reinstall the package: ${file} or its engine_bg.wasm is missing or broken (${(error as Error).message})`,
		});
	}
}
