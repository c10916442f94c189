// The guard's two operations around another n8n node's call: Check Provider (which provider may
// be called now; outputs go / deferred / failed) and Report Outcome (record that call; outputs
// success / - / failed). Every input item leaves on one output; bad input is a NodeOperationError
// naming the field (under continue-on-fail: the item on `failed` with the message).
import type { IExecuteFunctions } from 'n8n-workflow';
import { nodeFailed } from '../errorItem';
import { checkProvider } from './checkProvider';
import type { Outputs } from './common';
import { reportOutcome } from './reportOutcome';

export function isGuardOperation(op: unknown): op is 'checkProvider' | 'reportOutcome' {
	return op === 'checkProvider' || op === 'reportOutcome';
}

/** A guard operation; a node-level error (a bad parameter, store or pairing setting) under
 * continue-on-fail puts every item on `failed` with the message (n8n would pass them on as if
 * they had succeeded), as Call Chain does. */
export async function guardNode(
	ctx: IExecuteFunctions,
	operation: 'checkProvider' | 'reportOutcome',
): Promise<Outputs> {
	try {
		return operation === 'checkProvider' ? await checkProvider(ctx) : await reportOutcome(ctx);
	} catch (error) {
		return nodeFailed(ctx, error);
	}
}
