// The engine's `invalid_config` error as the user reads it: a message naming the provider, the
// field and what is wrong with it (the message alone survives n8n's continue-on-fail).
import { type IExecuteFunctions, NodeOperationError } from 'n8n-workflow';

export function configError(
	ctx: Pick<IExecuteFunctions, 'getNode'>,
	i: number,
	plan: { requests: { name: string }[] },
	error: Error & { code?: string; field?: string },
): NodeOperationError {
	const field = error.field ?? '';
	const m = /^providers\[(\d+)\]\.(.+)$/.exec(field);
	const where = m
		? `Provider "${plan.requests[Number(m[1])]?.name || `#${Number(m[1]) + 1}`}" (providers[${m[1]}]) `
		: '';
	const at = field ? error.message.indexOf(`${field}: `) : -1;
	const why = at >= 0 ? error.message.slice(at + field.length + 2) : error.message;
	return new NodeOperationError(
		ctx.getNode(),
		`Invalid parameter: ${where}${m ? m[2] : field}: ${why}`.slice(0, 500),
		{
			itemIndex: i,
			description: `${m ? `providers[${m[1]}].${m[2]}` : field}: ${why}`.slice(0, 2000),
		},
	);
}
