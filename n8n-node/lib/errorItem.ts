// An error that stops an item (a bad parameter, a missing secret, a store fault), the same from
// every operation: thrown to n8n as a NodeOperationError naming the item, or, under
// continue-on-fail, the item on `failed` with the message, `reason: 'node_error'` and its
// correlation id, beside and under `_resilience`. n8n itself would pass a failed node's input items
// on as if they had succeeded; every item leaves on `failed` instead.
import { type IExecuteFunctions, type INodeExecutionData, NodeOperationError } from 'n8n-workflow';
import { redact } from './secrets';
import { Cancelled } from './attemptAbort';

/** The id an item's attempts are logged with and its `_resilience` carries. */
export function correlationId(ctx: IExecuteFunctions, i: number): string {
	return `${ctx.getExecutionId()}:${i}`;
}

/** The `failed` item of an error under continue-on-fail. */
export function errorItem(
	input: INodeExecutionData,
	i: number,
	message: string,
	correlation: string,
): INodeExecutionData {
	return {
		json: {
			...input.json,
			reason: 'node_error',
			error: message,
			_resilience: { outcome: 'failed', reason: 'node_error', correlationId: correlation },
		},
		pairedItem: { item: i },
	};
}

/** Item `i` failed with `error`: thrown (a NodeOperationError, the execution's cancel as
 * "Execution cancelled"), or its `failed` item under continue-on-fail. `hidden`: values to
 * redact from the message (secrets, credentials). */
export function itemFailed(
	ctx: IExecuteFunctions,
	i: number,
	error: unknown,
	hidden: Record<string, string> = {},
): INodeExecutionData {
	const node = ctx.getNode();
	if (error instanceof Cancelled)
		throw new NodeOperationError(node, 'Execution cancelled', { itemIndex: i });
	const message = redact((error as Error).message, hidden);
	if (!ctx.continueOnFail()) {
		if (error instanceof NodeOperationError) throw error;
		throw new NodeOperationError(node, message, { itemIndex: i });
	}
	return errorItem(ctx.getInputData()[i], i, message, correlationId(ctx, i));
}

/** The node failed as a whole (a bad node-level parameter, credential or store setting): thrown,
 * or under continue-on-fail every input item on `failed` (the third output). */
export function nodeFailed(ctx: IExecuteFunctions, error: unknown): INodeExecutionData[][] {
	const e =
		error instanceof NodeOperationError
			? error
			: new NodeOperationError(ctx.getNode(), error as Error);
	if (!ctx.continueOnFail() || ctx.getExecutionCancelSignal?.()?.aborted) throw e;
	const failed = ctx
		.getInputData()
		.map((item, i) => errorItem(item, i, e.message, correlationId(ctx, i)));
	return [[], [], failed];
}
