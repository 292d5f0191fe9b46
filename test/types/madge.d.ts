// madge 8 ships no type declarations; this is what test/repo/import-graph.test.ts uses of it.
declare module 'madge' {
  interface MadgeConfig {
    fileExtensions?: string[]
    tsConfig?: string | object
    detectiveOptions?: Record<string, Record<string, unknown>>
  }
  interface MadgeResult {
    /** Every file and the files it imports, by path relative to the base directory. */
    obj (): Record<string, string[]>
    /** Each import circle, as the files it goes through. */
    circular (): string[][]
    /** Imports madge could not resolve to a file (`skipped`). */
    warnings (): { skipped: string[] }
  }
  export default function madge (
    path: string | string[],
    config?: MadgeConfig
  ): Promise<MadgeResult>
}
