// A tiny observable value and a preact hook to read it; the app's shared state (session,
// language, settings) lives in a few of these. Owns no data of its own.
import { useEffect, useState } from "preact/hooks";

export class Store<T> {
  private value: T;
  private readonly listeners = new Set<(v: T) => void>();

  constructor(value: T) {
    this.value = value;
  }

  get(): T {
    return this.value;
  }

  set(value: T): void {
    this.value = value;
    for (const l of [...this.listeners]) l(value);
  }

  subscribe(listener: (v: T) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** The store's value; the component re-renders when it changes. */
export function useStore<T>(store: Store<T>): T {
  const [, bump] = useState(0);
  useEffect(() => store.subscribe(() => bump((n) => n + 1)), [store]);
  return store.get();
}
