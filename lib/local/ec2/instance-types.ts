/**
 * The instance types the simulator describes (DescribeInstanceTypes): the ones its instances
 * run as — `m1.small` (RunInstances without InstanceType), `m5.large` (the local stack's nodes)
 * and `m6i.large` — with AWS's figures for each. A type not in the table is refused with a
 * message naming the ones it holds, never answered with made-up figures.
 *
 * Attachment limits: every Nitro type here has the shared limit AWS's API reports as
 * `maximumEbsAttachments` 27 with `attachmentLimitType` `shared` (the EBS CSI driver's table,
 * generated from this API, leaves out exactly the types answering 27/shared, and these are
 * absent from it), matching the simulator's 28 slots of a new instance shared with its one
 * network interface. A Xen type (`m1.small`) has no such hardware limit; AWS documents 40 as
 * the limit to stay under, which the driver's table records for Xen types.
 */
import { Ec2Error } from './errors.js';
import { compileFilters, type FilterTable } from './filters.js';
import type { QueryFilter } from './query.js';

export interface EbsOptimizedInfo {
  baselineBandwidthInMbps: number;
  baselineThroughputInMBps: number;
  baselineIops: number;
  maximumBandwidthInMbps: number;
  maximumThroughputInMBps: number;
  maximumIops: number;
}

export interface InstanceTypeInfo {
  instanceType: string;
  currentGeneration: boolean;
  freeTierEligible: boolean;
  supportedUsageClasses: string[];
  supportedRootDeviceTypes: string[];
  supportedVirtualizationTypes: string[];
  bareMetal: boolean;
  hypervisor: 'nitro' | 'xen';
  processorInfo: { supportedArchitectures: string[]; sustainedClockSpeedInGhz: number; manufacturer: string };
  vCpuInfo: { defaultVCpus: number; defaultCores: number; defaultThreadsPerCore: number };
  memoryInfo: { sizeInMiB: number };
  instanceStorageSupported: boolean;
  ebsInfo: {
    ebsOptimizedSupport: 'unsupported' | 'supported' | 'default';
    encryptionSupport: 'unsupported' | 'supported';
    ebsOptimizedInfo?: EbsOptimizedInfo;
    nvmeSupport: 'unsupported' | 'supported' | 'required';
    maximumEbsAttachments: number;
    attachmentLimitType: 'shared' | 'dedicated';
  };
  networkInfo: {
    networkPerformance: string;
    maximumNetworkInterfaces: number;
    maximumNetworkCards: number;
    defaultNetworkCardIndex: number;
    ipv4AddressesPerInterface: number;
    ipv6AddressesPerInterface: number;
    ipv6Supported: boolean;
    enaSupport: 'unsupported' | 'supported' | 'required';
    efaSupported: boolean;
  };
  nitroEnclavesSupport: 'unsupported' | 'supported';
}

const NITRO_SHARED = { maximumEbsAttachments: 27, attachmentLimitType: 'shared' } as const;

/** Figures of AWS's instance type pages (general purpose: M5, M6i; previous generation: M1). */
export const INSTANCE_TYPES: readonly InstanceTypeInfo[] = [
  {
    instanceType: 'm1.small',
    currentGeneration: false,
    freeTierEligible: false,
    supportedUsageClasses: ['on-demand', 'spot'],
    supportedRootDeviceTypes: ['ebs', 'instance-store'],
    supportedVirtualizationTypes: ['hvm', 'paravirtual'],
    bareMetal: false,
    hypervisor: 'xen',
    processorInfo: { supportedArchitectures: ['i386', 'x86_64'], sustainedClockSpeedInGhz: 1.8, manufacturer: 'Intel' },
    vCpuInfo: { defaultVCpus: 1, defaultCores: 1, defaultThreadsPerCore: 1 },
    memoryInfo: { sizeInMiB: 1740 },
    instanceStorageSupported: true,
    ebsInfo: { ebsOptimizedSupport: 'unsupported', encryptionSupport: 'unsupported', nvmeSupport: 'unsupported', maximumEbsAttachments: 40, attachmentLimitType: 'shared' },
    networkInfo: {
      networkPerformance: 'Low',
      maximumNetworkInterfaces: 2,
      maximumNetworkCards: 1,
      defaultNetworkCardIndex: 0,
      ipv4AddressesPerInterface: 4,
      ipv6AddressesPerInterface: 0,
      ipv6Supported: false,
      enaSupport: 'unsupported',
      efaSupported: false,
    },
    nitroEnclavesSupport: 'unsupported',
  },
  {
    instanceType: 'm5.large',
    currentGeneration: true,
    freeTierEligible: false,
    supportedUsageClasses: ['on-demand', 'spot'],
    supportedRootDeviceTypes: ['ebs'],
    supportedVirtualizationTypes: ['hvm'],
    bareMetal: false,
    hypervisor: 'nitro',
    processorInfo: { supportedArchitectures: ['x86_64'], sustainedClockSpeedInGhz: 3.1, manufacturer: 'Intel' },
    vCpuInfo: { defaultVCpus: 2, defaultCores: 1, defaultThreadsPerCore: 2 },
    memoryInfo: { sizeInMiB: 8192 },
    instanceStorageSupported: false,
    ebsInfo: {
      ebsOptimizedSupport: 'default',
      encryptionSupport: 'supported',
      ebsOptimizedInfo: {
        baselineBandwidthInMbps: 650,
        baselineThroughputInMBps: 81.25,
        baselineIops: 3600,
        maximumBandwidthInMbps: 4750,
        maximumThroughputInMBps: 593.75,
        maximumIops: 18750,
      },
      nvmeSupport: 'required',
      ...NITRO_SHARED,
    },
    networkInfo: {
      networkPerformance: 'Up to 10 Gigabit',
      maximumNetworkInterfaces: 3,
      maximumNetworkCards: 1,
      defaultNetworkCardIndex: 0,
      ipv4AddressesPerInterface: 10,
      ipv6AddressesPerInterface: 10,
      ipv6Supported: true,
      enaSupport: 'required',
      efaSupported: false,
    },
    nitroEnclavesSupport: 'unsupported',
  },
  {
    instanceType: 'm6i.large',
    currentGeneration: true,
    freeTierEligible: false,
    supportedUsageClasses: ['on-demand', 'spot'],
    supportedRootDeviceTypes: ['ebs'],
    supportedVirtualizationTypes: ['hvm'],
    bareMetal: false,
    hypervisor: 'nitro',
    processorInfo: { supportedArchitectures: ['x86_64'], sustainedClockSpeedInGhz: 3.5, manufacturer: 'Intel' },
    vCpuInfo: { defaultVCpus: 2, defaultCores: 1, defaultThreadsPerCore: 2 },
    memoryInfo: { sizeInMiB: 8192 },
    instanceStorageSupported: false,
    ebsInfo: {
      ebsOptimizedSupport: 'default',
      encryptionSupport: 'supported',
      ebsOptimizedInfo: {
        baselineBandwidthInMbps: 650,
        baselineThroughputInMBps: 81.25,
        baselineIops: 3600,
        maximumBandwidthInMbps: 10000,
        maximumThroughputInMBps: 1250,
        maximumIops: 40000,
      },
      nvmeSupport: 'required',
      ...NITRO_SHARED,
    },
    networkInfo: {
      networkPerformance: 'Up to 12.5 Gigabit',
      maximumNetworkInterfaces: 3,
      maximumNetworkCards: 1,
      defaultNetworkCardIndex: 0,
      ipv4AddressesPerInterface: 10,
      ipv6AddressesPerInterface: 10,
      ipv6Supported: true,
      enaSupport: 'required',
      efaSupported: false,
    },
    nitroEnclavesSupport: 'unsupported',
  },
];

export function instanceTypeInfo(name: string): InstanceTypeInfo | undefined {
  return INSTANCE_TYPES.find((t) => t.instanceType === name);
}

const typeFilters: FilterTable<InstanceTypeInfo> = {
  fields: {
    'instance-type': (t) => [t.instanceType],
    hypervisor: (t) => [t.hypervisor],
    'current-generation': (t) => [String(t.currentGeneration)],
    'bare-metal': (t) => [String(t.bareMetal)],
    'free-tier-eligible': (t) => [String(t.freeTierEligible)],
    'ebs-info.ebs-optimized-support': (t) => [t.ebsInfo.ebsOptimizedSupport],
    'ebs-info.encryption-support': (t) => [t.ebsInfo.encryptionSupport],
    'ebs-info.nvme-support': (t) => [t.ebsInfo.nvmeSupport],
    'memory-info.size-in-mib': (t) => [String(t.memoryInfo.sizeInMiB)],
    'vcpu-info.default-vcpus': (t) => [String(t.vCpuInfo.defaultVCpus)],
    'network-info.maximum-network-interfaces': (t) => [String(t.networkInfo.maximumNetworkInterfaces)],
    'processor-info.supported-architecture': (t) => t.processorInfo.supportedArchitectures,
  },
};

/** The types named (all when none are), filtered, in the table's order; a name not in the table is EC2's InvalidInstanceType. */
export function findInstanceTypes(names: readonly string[], filters: readonly QueryFilter[]): (InstanceTypeInfo & { seq: number })[] {
  const unknown = names.filter((n) => !instanceTypeInfo(n));
  if (unknown.length > 0) {
    throw new Ec2Error(
      'InvalidInstanceType',
      `The following supplied instance types do not exist: [${unknown.join(', ')}] (the simulator describes ${INSTANCE_TYPES.map((t) => t.instanceType).join(', ')})`,
    );
  }
  const keep = compileFilters(filters, typeFilters);
  return INSTANCE_TYPES.map((t, seq) => ({ ...t, seq }))
    .filter((t) => names.length === 0 || names.includes(t.instanceType))
    .filter(keep);
}
