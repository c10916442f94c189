// Before an item's first call: every secret its providers name is there and can travel in a
// header, and every provider sent with an n8n credential points at a domain that credential
// allows. A failure names the provider and the field, never the secret's value.
import { type INode, NodeOperationError } from 'n8n-workflow';
import { assertUrlAllowed, type LoadedCredentials } from './auth';
import type { ItemPlan } from './params';

export function assertRequestSecrets(
	node: INode,
	i: number,
	plan: ItemPlan,
	secrets: Record<string, string>,
	credentials: LoadedCredentials,
): void {
	for (const r of plan.requests) {
		if (r.credentialType) assertUrlAllowed(node, r.name, r.url, r.credentialType, credentials);
		if (r.secretName && secrets[r.secretName] === undefined) {
			throw new NodeOperationError(
				node,
				`Provider "${r.name}": secret "${r.secretName}" is not in the Resilient Provider Secrets credential`,
				{ itemIndex: i },
			);
		}
		// A line break in a header value is refused or silently stripped by HTTP clients (axios
		// sends "Bearer xX-Injected: 1"): the provider would get a mangled key. Never send it.
		// eslint-disable-next-line no-control-regex
		if (r.secretName && /[\u0000-\u0008\u000a-\u001f\u007f]/.test(secrets[r.secretName])) {
			throw new NodeOperationError(
				node,
				`Provider "${r.name}": secret "${r.secretName}" holds a line break or control character, which a header cannot carry (the value is not shown)`,
				{ itemIndex: i },
			);
		}
	}
}
