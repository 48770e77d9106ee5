"""Seeds a moto S3 server for tests/it/tfstate_s3.rs: an IAM user with a key pair allowed to use
S3 (moto checks signatures once its first unauthenticated requests are spent, see
INITIAL_NO_AUTH_ACTION_COUNT), then, signed with that pair by boto3, a bucket holding the state
file under each key given. Prints the key pair as JSON."""

import argparse
import json

import boto3


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--bucket", required=True)
    p.add_argument("--file", required=True)
    p.add_argument("--key", action="append", required=True)
    a = p.parse_args()
    # The three IAM calls below are moto's unauthenticated ones.
    iam = boto3.client(
        "iam",
        endpoint_url=a.url,
        region_name="us-east-1",
        aws_access_key_id="bootstrap",
        aws_secret_access_key="bootstrap",
    )
    iam.create_user(UserName="atoll")
    key = iam.create_access_key(UserName="atoll")["AccessKey"]
    iam.put_user_policy(
        UserName="atoll",
        PolicyName="s3",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}],
            }
        ),
    )
    s3 = boto3.client(
        "s3",
        endpoint_url=a.url,
        region_name="us-east-1",
        aws_access_key_id=key["AccessKeyId"],
        aws_secret_access_key=key["SecretAccessKey"],
    )
    s3.create_bucket(Bucket=a.bucket)
    with open(a.file, "rb") as f:
        body = f.read()
    for k in a.key:
        s3.put_object(Bucket=a.bucket, Key=k, Body=body)
    print(
        json.dumps(
            {
                "access_key_id": key["AccessKeyId"],
                "secret_access_key": key["SecretAccessKey"],
            }
        )
    )


if __name__ == "__main__":
    main()
