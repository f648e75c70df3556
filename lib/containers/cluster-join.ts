import * as ecs from 'aws-cdk-lib/aws-ecs';
import { FsCacheClientLaunchTemplate } from '../client/fs-cache-client';
import { parameterLine } from '../instance/user-data';
import { boundaryError, EKS_MIME_BOUNDARY, eksNodeUserData } from './eks-user-data';

/**
 * Makes the instances of `hosts` ECS container instances of `cluster`: the `ECS_CLUSTER` line aws-cdk-lib adds to their
 * user data when the cluster takes them as capacity names the cluster with its deploy-time name spliced into a command;
 * it is replaced by the name as data (decoded from base64 into a variable), then the same line.
 */
export function joinEcsCluster(hosts: FsCacheClientLaunchTemplate, cluster: ecs.ICluster): void {
  hosts._claimForCluster(`ECS cluster ${cluster.node.path}`);
  const name = parameterLine('EFSC_ECS_CLUSTER', cluster.clusterName, hosts);
  hosts._replaceUserDataCommand(`echo ECS_CLUSTER=${cluster.clusterName} >> /etc/ecs/ecs.config`,
    [name.text, 'echo "ECS_CLUSTER=${EFSC_ECS_CLUSTER}" >> /etc/ecs/ecs.config']);
}

/**
 * Makes the instances of `hosts` EKS nodes: their user data becomes a MIME multi-part document of `nodeConfig`
 * (nodeadm's `NodeConfig`, `application/node.eks.aws`), the FS-Cache bootstrap (which marks its success) and
 * assets/client/eks-node-gate.sh, which keeps the kubelet from starting when the bootstrap did not succeed.
 */
export function joinEksCluster(hosts: FsCacheClientLaunchTemplate, cluster: string, nodeConfig: string, nodeConfigBytes: number): void {
  hosts._claimForCluster(`EKS cluster ${cluster}`);
  // The document's headers, the NodeConfig, the mark and the gate: all of it but the script (whose size is counted).
  const around = Buffer.byteLength(eksNodeUserData('', ''), 'utf8') + nodeConfigBytes;
  hosts._wrapUserData((script) => eksNodeUserData(nodeConfig, script, hosts),
    { estimatedBytes: around, description: 'the EKS node\'s NodeConfig and gate take' });
  // The commands added to userData are the user's code, but the boundary in them would cut the document's parts.
  hosts.node.addValidation({
    validate: () => hosts.userData.render().includes(EKS_MIME_BOUNDARY) ? [boundaryError(hosts).message] : [],
  });
}
