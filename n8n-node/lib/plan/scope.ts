// The state scope a node's rows live in: shared by every workflow ('global'), or one workflow's
// own ('wf:<id>'). The calling nodes and the trigger name it the same way.
export type ScopeMode = 'provider' | 'workflow';

export const SCOPE_MODES: readonly ScopeMode[] = ['provider', 'workflow'];

export function scopeName(mode: ScopeMode, workflowId: string | undefined): string {
	return mode === 'workflow' ? `wf:${workflowId ?? 'unsaved'}` : 'global';
}
