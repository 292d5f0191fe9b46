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
