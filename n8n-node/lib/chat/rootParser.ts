// The output parser the chat model's answers go to, found in the workflow: the root node that
// asked for this model (n8n's context for a sub-node carries the root's execute data) and, on its
// output-parser input, n8n's Structured Output Parser, read as its version and n8n's major read
// an answer (answerCheck/parserReading.ts). None found (no parser, another parser, an n8n that
// does not say who asked): the Answer Check reads the answer as it always has.
import { NodeConnectionTypes, type INode, type ISupplyDataFunctions } from 'n8n-workflow';
import type { ParserReading } from '../answerCheck/parserReading';

const STRUCTURED_PARSER = '@n8n/n8n-nodes-langchain.outputParserStructured';
const AGENT = '@n8n/n8n-nodes-langchain.agent';

/** n8n's major, from the version of n8n-workflow it runs with (this package's peer dependency,
 * released with n8n: 1.120 in n8n 1.123, 2.41 in n8n 2.41): its parser's fence rule. */
function n8nMajor(): number | undefined {
	try {
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const { version } = require('n8n-workflow/package.json') as { version?: string };
		const major = Number(String(version).split('.')[0]);
		return Number.isInteger(major) ? major : undefined;
	} catch {
		return undefined;
	}
}

export function rootParser(ctx: ISupplyDataFunctions): ParserReading | undefined {
	const root = (ctx as { getExecuteData?: () => { node?: INode } }).getExecuteData?.()?.node;
	if (!root || root.name === ctx.getNode().name) return undefined;
	// The root reads its parser only while "Require Specific Output Format" is on (n8n's own rule).
	if (root.parameters?.hasOutputParser === false) return undefined;
	const parser = ctx
		.getParentNodes(root.name, { connectionType: NodeConnectionTypes.AiOutputParser, depth: 1 })
		.find((n) => !n.disabled);
	if (parser?.type !== STRUCTURED_PARSER) return undefined;
	const major = n8nMajor();
	if (major === undefined) return undefined;
	return {
		version: parser.typeVersion,
		fence: major >= 2 ? 'lines' : 'split',
		rootWrapsText: root.type === AGENT,
	};
}
