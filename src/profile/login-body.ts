import { LOGIN_PLACEHOLDERS } from './built-in.ts'

/**
 * The login's body: the profile's template (login.body), the hub's shape,
 * with the account (UPSTREAM_LOGIN_USERNAME, UPSTREAM_LOGIN_PASSWORD) put
 * where its string values are "{username}" and "{password}". A value that
 * only contains a placeholder is left as it is: the account goes in whole
 * values, so that no text around it is taken for part of it.
 */

export interface LoginAccount {
  username: string
  password: string
}

function replaced (value: unknown, account: LoginAccount): unknown {
  if (value === LOGIN_PLACEHOLDERS.username) return account.username
  if (value === LOGIN_PLACEHOLDERS.password) return account.password
  if (Array.isArray(value)) return value.map(item => replaced(item, account))
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([key, item]) => [key, replaced(item, account)])
    return Object.fromEntries(entries)
  }
  return value
}

/** The JSON the login POSTs. */
export function loginBody (
  template: Readonly<Record<string, unknown>>,
  account: LoginAccount
): string {
  return JSON.stringify(replaced(template, account))
}

/** Whether `placeholder` is one of the template's string values, at any depth. */
export function holdsPlaceholder (template: unknown, placeholder: string): boolean {
  if (template === placeholder) return true
  if (Array.isArray(template)) return template.some(item => holdsPlaceholder(item, placeholder))
  if (template !== null && typeof template === 'object') {
    return Object.values(template).some(item => holdsPlaceholder(item, placeholder))
  }
  return false
}
