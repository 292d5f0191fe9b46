import { SANDBOX_PLATFORM_ID } from './constants.ts'
import type { Platform } from './records.ts'

// Truck platforms that SP2 documents point at. Addresses use the
// reserved .example domain. Two of them leave the nullable fields null, one
// fills them, so consumers meet both.
export const PLATFORMS: readonly Platform[] = [
  {
    id_platform: SANDBOX_PLATFORM_ID,
    nama_platform: 'Sandbox Truk',
    company: 'PT Sandbox Angkutan Digital',
    tc_url: 'https://truk.sandbox.example/syarat-dan-ketentuan',
    payment_url:
      'https://truk.sandbox.example/bayar?kode={kode}&idRequestBooking={idRequestBooking}',
    live_tracking_url: 'https://truk.sandbox.example/lacak',
    no_rekening: null,
    npwp: null,
    app_url: null,
    logo_platform: 'logo-pltsbx01.png',
    publication_date: '2023-08-14 10:00:00',
    publication_date_updated: '2024-01-05 16:30:00',
    kode_kantor: null,
    mst_kantor: null,
    mstPlatformServices: [
      { id_service: 1, service_name: 'Trucking' },
      { id_service: 2, service_name: 'Depo' }
    ]
  },
  {
    id_platform: 'PLT00027',
    nama_platform: 'Angkut Cepat',
    company: 'PT Angkut Cepat Nusantara',
    tc_url: 'https://angkutcepat.example/tnc',
    payment_url: 'https://angkutcepat.example/payment/{kode}/{idRequestBooking}',
    live_tracking_url: 'https://angkutcepat.example/tracking',
    no_rekening: '1230004567890',
    npwp: '017654321098000',
    app_url: 'https://app.angkutcepat.example',
    logo_platform: 'angkut-cepat.png',
    publication_date: '2022-11-01 08:00:00',
    publication_date_updated: '2024-02-20 09:15:00',
    kode_kantor: '040300',
    mst_kantor: null,
    mstPlatformServices: [
      { id_service: 1, service_name: 'Trucking' },
      { id_service: 3, service_name: 'Warehouse' },
      { id_service: 4, service_name: 'Domestic' }
    ]
  },
  {
    id_platform: 'PLT00041',
    nama_platform: 'Logtruk',
    company: 'PT Logistik Truk Indonesia',
    tc_url: 'https://logtruk.example/terms',
    payment_url: 'https://logtruk.example/pay?c={kode}&b={idRequestBooking}',
    live_tracking_url: 'https://logtruk.example/live',
    no_rekening: null,
    npwp: null,
    app_url: null,
    logo_platform: 'logtruk.svg',
    publication_date: '2023-03-09 13:45:00',
    publication_date_updated: '2023-03-09 13:45:00',
    kode_kantor: null,
    mst_kantor: null,
    mstPlatformServices: [{ id_service: 1, service_name: 'Trucking' }]
  }
]
