#!/bin/bash
# Makes a throw-away CA and a server certificate signed by it, for the AWS API emulator (server.py): the names the
# instance scripts reach, so that the real aws CLI verifies the emulator as it verifies AWS, once the CA is in the
# bundle it trusts. Keys live only in DIR and only as long as the test run.
#   certs.sh DIR [NAME...]   -> DIR/ca.pem, DIR/server.pem, DIR/server.key (extra NAMEs join the SANs)
set -euo pipefail
dir="$1"
shift
mkdir -p "$dir"
cd "$dir"
names=(
  localhost
  ec2.us-east-1.amazonaws.com
  cloudformation.us-east-1.amazonaws.com
  autoscaling.us-east-1.amazonaws.com
  monitoring.us-east-1.amazonaws.com
  sts.us-east-1.amazonaws.com sts.amazonaws.com
  s3.amazonaws.com s3.us-east-1.amazonaws.com '*.s3.amazonaws.com' '*.s3.us-east-1.amazonaws.com'
  "$@"
)
san=""
for n in "${names[@]}"; do san+="${san:+,}DNS:$n"; done
san+=",IP:127.0.0.1"
openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 2 -subj '/CN=cdk-efs-cache test CA' \
  -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' \
  -keyout ca.key -out ca.pem 2>/dev/null
openssl req -newkey rsa:2048 -nodes -sha256 -subj '/CN=amazonaws.com' -keyout server.key -out server.csr 2>/dev/null
printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' \
  "$san" >server.ext
openssl x509 -req -sha256 -days 2 -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -extfile server.ext \
  -out server.pem 2>/dev/null
rm -f ca.key server.csr server.ext ca.srl
