// A provider's response check: Response Must Contain (a dot path), or an LLM preset's default
// "the answer has text". The check only reads the body; what a failed check means is the
// engine's rule (on a success status it counts as a failure of the provider).
import { presetAnswer, presetFailedCheck } from './presets';
import type { ProviderRequest } from './params';
import { missingPath } from './transport';

export function failedCheck(req: ProviderRequest, body: unknown): string | undefined {
	if (req.requiredPath)
		return missingPath(body, req.requiredPath) ? `required_path:${req.requiredPath}` : undefined;
	if (req.preset) return presetFailedCheck(presetAnswer(req.preset, body, req.name));
	return undefined;
}
