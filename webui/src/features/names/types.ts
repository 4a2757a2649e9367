/** One name component below a prefix, with the number of files under it. */
export interface NameEntry {
  component: string;
  name: string;
  count: number;
  /** a file, not a prefix */
  leaf: boolean;
}

export interface TreeLevel {
  path: string;
  count: number;
  children: NameEntry[];
  /** more children exist than were asked for */
  truncated: boolean;
}
