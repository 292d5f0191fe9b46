// What a stub imports to reach the dist/ module it replaces (hooks.ts lets `?original` through).
export function originalOf (module: string): string {
  return `${new URL(`../../dist/${module}`, import.meta.url).href}?original`
}
