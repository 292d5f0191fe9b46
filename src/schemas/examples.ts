/**
 * Example values for the OpenAPI document. They are seeded sandbox values,
 * so Swagger UI's "Try it out" answers with data on the built-in sandbox.
 */
export const EXAMPLES = {
  npwp: '01.234.567.8-901.000',
  blNo: 'COSUMKS9061740',
  blDate: '2024-02-17',
  containerNo: 'TCLU6470801',
  pibNo: '350420',
  sp2Id: 'b574cfab-cbef-4bd7-891b-49ff41d85755',
  bookingRequestId: 'BKG-20240301-0001',
  serviceOrderId: 'SO-1'
}

/**
 * Per container route, a BL of the sandbox that has containers in that
 * document type's list, so that each route's example answers with data
 * (test/app/try-it-out.test.ts checks that every example list is not empty).
 */
export const CONTAINER_EXAMPLES: Record<string, { blNo: string, blDate: string }> = {
  bc20: { blNo: 'COSUMKS9061740', blDate: '2024-02-17' },
  bc23: { blNo: 'MEDUSUB5040963', blDate: '2024-02-01' },
  bc25: { blNo: 'MAEUBLW6710432', blDate: '2024-04-17' },
  bc261: { blNo: 'CMDUSUB0324491', blDate: '2024-06-05' },
  bc262: { blNo: 'EGLVSRG3533178', blDate: '2024-01-11' },
  bc27: { blNo: 'ONEYSRG4551477', blDate: '2024-01-18' },
  bc28: { blNo: 'HLCUBLW6951652', blDate: '2024-05-05' },
  bc30: { blNo: 'OOLUJKT2150806', blDate: '2024-02-04' },
  sp3b: { blNo: 'HLCUSRG5508709', blDate: '2024-04-21' },
  ppftz: { blNo: 'EGLVBLW8716404', blDate: '2024-05-13' }
}
