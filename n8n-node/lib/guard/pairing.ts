// Report Outcome finds the ticket of an item through n8n's item pairing, back to the Check
// Provider node: app nodes replace an item's JSON, so the ticket cannot ride in it. n8n's own
// `$('Check').item` resolves the pairing (WorkflowDataProxy, the same in 1.123 and 2.41), through
// any number of nodes and runs (a Wait loop), on the main and the error output alike.
import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	NodeOperationError,
} from 'n8n-workflow';
import type { Ticket } from '../engine';

const CHECK = 'checkProvider';

/** The fields of a ticket in a fixed order: the text recorded at Check and claimed at Report
 * (an item's JSON may come back from storage with its keys reordered). */
export function ticketText(t: Ticket): string {
	return JSON.stringify([t.provider, t.name, t.probe, t.lease, t.scope, t.issued_ms, t.expires_ms]);
}

/** The Check Provider node this Report answers: the one named in "Check Node", else the nearest
 * Check Provider node of this package before this one. */
export function checkNodeName(ctx: IExecuteFunctions, named: string): string {
	const self = ctx.getNode();
	const parents = ctx.getParentNodes(self.name, { includeNodeParameters: true });
	if (named) {
		if (!parents.some((p) => p.name === named))
			throw new NodeOperationError(
				self,
				`Report Outcome: "Check Node" (checkNode) names "${named.slice(0, 100)}", which does not run before this node`,
			);
		return named;
	}
	const check = parents.find(
		(p) =>
			p.type === self.type && !p.disabled && (p.parameters as IDataObject)?.operation === CHECK,
	);
	if (!check)
		throw new NodeOperationError(
			self,
			'Report Outcome: "Check Node" (checkNode): no Check Provider node runs before this node; connect Check Provider → the guarded node → Report Outcome',
		);
	return check.name;
}

export interface Found {
	ticket: Ticket;
	text: string;
}

/** Item i's ticket, from its paired item at the Check node; a clear error naming the field. */
export function pairedTicket(ctx: IExecuteFunctions, i: number, checkNode: string): Found {
	let paired: INodeExecutionData | undefined;
	try {
		const proxy = ctx.getWorkflowDataProxy(i);
		paired = (proxy.$(checkNode) as { item?: INodeExecutionData }).item;
	} catch (e) {
		throw new NodeOperationError(
			ctx.getNode(),
			`Report Outcome: "Check Node" (checkNode): item ${i} has no pairing back to "${checkNode}": ${(e as Error).message}`,
			{ itemIndex: i },
		);
	}
	const meta = (paired?.json?._resilience ?? {}) as IDataObject;
	const ticket = meta.ticket as unknown as Ticket | undefined;
	if (!ticket || typeof ticket !== 'object')
		throw new NodeOperationError(
			ctx.getNode(),
			`Report Outcome: item ${i} pairs with an item of "${checkNode}" that holds no ticket (_resilience.ticket): only items from its "go" output carry one`,
			{ itemIndex: i },
		);
	return { ticket, text: ticketText(ticket) };
}
