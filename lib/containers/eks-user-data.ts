import { IConstruct } from 'constructs';
import { eksNodeGate } from '../client/fs-cache-client';
import { propError } from '../private/errors';

/** Where the FS-Cache bootstrap's part of an EKS node's user data marks its success (assets/client/eks-node-gate.sh). */
export const EKS_NODE_READY_FILE = '/run/efs-cache/eks-node-ready';

/**
 * The boundary of an EKS node's MIME user data. It holds a `,`, which no deploy-time value of the document can: those of
 * the NodeConfig are cluster names, https URLs, base64 and CIDRs (EksFleetNodes refuses any other), those of the
 * scripts are base64 (`Fn::Base64`); and the text around them is checked not to hold it at synth.
 */
export const EKS_MIME_BOUNDARY = '==cdk-efs-cache,eks-node==';

/**
 * An EKS node's user data: a MIME multi-part document, as nodeadm (which reads the `application/node.eks.aws` part
 * before cloud-init runs) and cloud-init (which runs the `text/x-shellscript` parts in the order of their file names,
 * each whatever the one before returned) read it. The bootstrap's part ends by marking its first boot's success.
 */
export function eksNodeUserData(nodeConfig: string, script: string, scope?: IConstruct): string {
  // A part that held the boundary would end there, and what follows it could open a part of its own (a script).
  if (nodeConfig.includes(EKS_MIME_BOUNDARY) || script.includes(EKS_MIME_BOUNDARY)) throw boundaryError(scope);
  const mark = [
    '# An EKS node: the mark of the first boot\'s success, which the next part (eks-node-gate.sh) lets the kubelet start on.',
    `if [ -z "\${1:-}" ]; then mkdir -p /run/efs-cache && touch ${EKS_NODE_READY_FILE}; fi`,
  ].join('\n');
  const part = (headers: string[], body: string) => `--${EKS_MIME_BOUNDARY}\n${headers.join('\n')}\n\n${body.replace(/\n*$/, '\n')}`;
  return [
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${EKS_MIME_BOUNDARY}"`,
    '',
    part(['Content-Type: application/node.eks.aws'], nodeConfig),
    part(['Content-Type: text/x-shellscript; charset="us-ascii"', 'Content-Disposition: attachment; filename="10-efs-cache-client.sh"'],
      `${script.replace(/\n*$/, '\n')}${mark}`),
    part(['Content-Type: text/x-shellscript; charset="us-ascii"', 'Content-Disposition: attachment; filename="20-efs-cache-eks-node-gate.sh"'],
      eksNodeGate()),
    `--${EKS_MIME_BOUNDARY}--`,
    '',
  ].join('\n');
}

/** `Invalid userData` for a user data whose text holds the boundary of an EKS node's MIME document. */
export function boundaryError(scope?: IConstruct): Error {
  return propError(scope, 'userData', `holds '${EKS_MIME_BOUNDARY}', the boundary of the EKS node's MIME user data, which would end ` +
    'its part there: leave it out of the commands added to the user data.');
}
