// As an AI agent's tool the node's outputs collapse to one: agents read only output 0, so each
// item becomes one structured result saying success, degraded, deferred or failed, shaped by the
// item's outcome builder (resilience.ts's toolJson).
import type { INode, INodeExecutionData } from 'n8n-workflow';
import { toolJson } from './resilience';

export function runsAsTool(node: INode): boolean {
	return (
		node.type.endsWith('Tool') ||
		(node as INode & { rewireOutputLogTo?: string }).rewireOutputLogTo === 'ai_tool'
	);
}

export function toolResult(out: INodeExecutionData[][]): INodeExecutionData[][] {
	const items = out.flat();
	items.sort(
		(a, b) => (a.pairedItem as { item: number }).item - (b.pairedItem as { item: number }).item,
	);
	return [items.map((item) => ({ json: toolJson(item.json), pairedItem: item.pairedItem }))];
}
