/** The cluster CLI's exit codes: 0 done, 1 refused or failed, 2 bad arguments (nothing done). */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;
