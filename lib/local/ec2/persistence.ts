import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorldState } from './model.js';

const FILE = 'ec2-state.json';
const DEBOUNCE_MS = 250;

/**
 * Writes the world to `<dir>/ec2-state.json` shortly after it changes (atomically, by
 * rename), so a restarted simulator finds its volumes, instances and pending transitions.
 */
export class StateFile {
  private timer: NodeJS.Timeout | undefined;
  private readonly path: string;

  constructor(
    dir: string,
    private readonly read: () => WorldState,
  ) {
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, FILE);
  }

  load(): WorldState | undefined {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    const state = JSON.parse(text) as WorldState;
    if (state.version !== 1) throw new Error(`${this.path}: unknown state version ${String(state.version)}`);
    return state;
  }

  /** Debounced: a burst of changes is one write. */
  changed(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      try {
        this.flush();
      } catch (err) {
        console.error(`ec2 simulator: could not save state to ${this.path}:`, err);
      }
    }, DEBOUNCE_MS);
    this.timer.unref();
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.read()));
    renameSync(tmp, this.path);
  }
}
