// As an AI agent's tool the node's outputs collapse to one: agents read only output 0, so each
// item becomes one structured result saying success, deferred or failed.
import type { IDataObject, INode, INodeExecutionData } from 'n8n-workflow';

export function runsAsTool(node: INode): boolean {
	return (
		node.type.endsWith('Tool') ||
		(node as INode & { rewireOutputLogTo?: string }).rewireOutputLogTo === 'ai_tool'
	);
}

export function toolResult(out: INodeExecutionData[][]): INodeExecutionData[][] {
	const items = out.flatMap((o, k) => o.map((item) => ({ item, k })));
	items.sort(
		(a, b) =>
			(a.item.pairedItem as { item: number }).item - (b.item.pairedItem as { item: number }).item,
	);
	return [
		items.map(({ item, k }) => {
			const { _resilience: meta, ...data } = item.json as IDataObject & {
				_resilience?: IDataObject;
			};
			const status =
				k === 0
					? meta?.outcome === 'degraded'
						? 'degraded'
						: 'success'
					: k === 1
						? 'deferred'
						: 'failed';
			return {
				json: {
					status,
					provider: (meta?.provider as string) ?? null,
					reason: (meta?.reason as string) ?? null,
					retry_at: (meta?.retry_at as string) ?? null,
					result: k === 0 ? data : null,
				},
				pairedItem: item.pairedItem,
			};
		}),
	];
}
